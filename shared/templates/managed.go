package templates

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// Managed-cluster templates ({{ ... }}) are resolved by the spoke against the
// managed cluster, as OCM's config-policy-controller v0.19 resolves them.

const (
	// KeyData and PreviousKeyData are the data keys of the EncryptionKeySecret
	// holding the current AES key and the one before the last rotation.
	KeyData         = "key"
	PreviousKeyData = "previousKey"

	// ReasonTemplateError is the reason of an object template whose templates
	// cannot be resolved (OCM's).
	ReasonTemplateError = "Error processing template"
)

var (
	usesObjectNamespace = regexp.MustCompile(`\.ObjectNamespace`)
	usesObjectName      = regexp.MustCompile(`\.ObjectName\W`)
	usesObject          = regexp.MustCompile(`\.Object\W`)
)

// HasManagedTemplate reports whether raw holds a managed-cluster template or a
// value the hub encrypted ($ocm_encrypted:): both need the resolver.
func HasManagedTemplate(raw []byte) bool {
	return gotemplates.HasTemplate(raw, "", true)
}

// TemplateUses tells which per-object context variables an object
// definition's templates read.
type TemplateUses struct {
	// Object is .Object: the existing object the template describes.
	Object bool
	// ObjectName and ObjectNamespace are .ObjectName and .ObjectNamespace.
	ObjectName, ObjectNamespace bool
}

// ContextUses reads which context variables raw's templates use.
func ContextUses(raw []byte) TemplateUses {
	if !HasManagedTemplate(raw) {
		return TemplateUses{}
	}
	return TemplateUses{
		Object:          usesObject.Match(raw),
		ObjectName:      usesObjectName.Match(raw),
		ObjectNamespace: usesObjectNamespace.Match(raw),
	}
}

// ObjectContext is the context of an object definition's templates for the
// object named name in namespace ns (either may be empty), with obj the object
// as it exists (nil when it does not or was not read). As OCM gives it: .Object
// and .ObjectName for a named object, .ObjectNamespace for a namespaced one.
func ObjectContext(obj map[string]any, name, ns string) any {
	if obj == nil {
		obj = map[string]any{}
	}
	switch {
	case name != "" && ns != "":
		return struct {
			Object          map[string]any
			ObjectNamespace string
			ObjectName      string
		}{Object: obj, ObjectNamespace: ns, ObjectName: name}
	case name != "":
		return struct {
			Object     map[string]any
			ObjectName string
		}{Object: obj, ObjectName: name}
	case ns != "":
		return struct{ ObjectNamespace string }{ObjectNamespace: ns}
	}
	return struct{}{}
}

// UsesDecryption reports whether a template's annotations say it holds values
// the hub encrypted (it carries the IVAnnotation).
func UsesDecryption(annotations map[string]string) bool {
	return annotations[IVAnnotation] != ""
}

// DecryptionConfig is how values the hub encrypted are decrypted on the
// managed cluster: with the IVAnnotation of the template and the key (and the
// previous key as fallback) of the EncryptionKeySecret the spoke copied into
// the template's namespace. keyData is that Secret's data; nil when it does not
// exist.
func DecryptionConfig(annotations map[string]string, keyData map[string][]byte, namespace string) (gotemplates.EncryptionConfig, error) {
	iv, err := base64.StdEncoding.DecodeString(annotations[IVAnnotation])
	if err != nil {
		return gotemplates.EncryptionConfig{}, fmt.Errorf(`the policy annotation of "%s" is not Base64: %w`, IVAnnotation, err)
	}
	if keyData == nil {
		return gotemplates.EncryptionConfig{}, fmt.Errorf("failed to get the encryption key from Secret %s/%s: it does not exist", namespace, EncryptionKeySecret)
	}
	return gotemplates.EncryptionConfig{
		AESKey:               keyData[KeyData],
		AESKeyFallback:       keyData[PreviousKeyData],
		DecryptionEnabled:    true,
		InitializationVector: iv,
	}, nil
}

// ErrorMessage is the NonCompliant message of a failed resolution, as OCM
// words it.
func ErrorMessage(err error) string {
	switch {
	case errors.Is(err, gotemplates.ErrInvalidAESKey) || errors.Is(err, gotemplates.ErrAESKeyNotSet):
		return fmt.Sprintf(`The "%s" Secret contains an invalid AES key`, EncryptionKeySecret)
	case errors.Is(err, gotemplates.ErrInvalidIV):
		return fmt.Sprintf(`The "%s" annotation value is not a valid initialization vector`, IVAnnotation)
	}
	return err.Error()
}

// HubTemplateErrorMessage returns the hub template error a policy template
// carries in its HubErrorAnnotation (OCM's propagator writes it when the hub
// could not resolve the template): such a template is not applied, and is
// NonCompliant with that message, as OCM's framework add-on reports it.
func HubTemplateErrorMessage(annotations map[string]string) (string, bool) {
	msg := annotations[HubErrorAnnotation]
	return msg, msg != ""
}

// ObjectResolution is one resolved object definition.
type ObjectResolution struct {
	// JSON is the resolved object definition.
	JSON []byte
	// Skip is true when the template called skipObject: the object is left out.
	Skip bool
	// Sensitive is true when the templates read a Secret or decrypted a value.
	Sensitive bool
}

// ResolveObjectDefinition resolves the templates of one object definition
// with context (ObjectContext) and opts (the caller's Watcher and, from
// DecryptionConfig, decryption). The function skipObject (OCM's) is available:
// called without argument or with true, it leaves the object out.
func ResolveObjectDefinition(r Resolver, raw []byte, context any, opts gotemplates.ResolveOptions) (ObjectResolution, error) {
	var skip bool
	var skipErr error
	opts.DenylistFunctions = append([]string(nil), opts.DenylistFunctions...)
	opts.CustomFunctions = map[string]any{
		"skipObject": func(args ...any) (string, error) {
			switch len(args) {
			case 0:
				skip = true
			case 1:
				b, ok := args[0].(bool)
				if !ok {
					skipErr = fmt.Errorf("expected boolean but received '%v'", args[0])
					return "", skipErr
				}
				skip = skip || b
			default:
				skipErr = fmt.Errorf("expected one optional boolean argument but received %d arguments", len(args))
				return "", skipErr
			}
			return "", nil
		},
	}
	res, err := r.ResolveTemplate(raw, context, &opts)
	if skip && skipErr == nil {
		return ObjectResolution{Skip: true}, nil
	}
	if err != nil {
		return ObjectResolution{}, err
	}
	return ObjectResolution{JSON: res.ResolvedJSON, Sensitive: res.HasSensitiveData}, nil
}

// ResolveObjectTemplatesRaw builds the object templates of a
// ConfigurationPolicy's spec.object-templates-raw: the YAML list as written
// when it holds no template, else the list its templates make (with range and
// the like). The object definitions it yields are then evaluated without
// templates, as OCM does. sensitive is true when the templates read a Secret
// or decrypted a value.
func ResolveObjectTemplatesRaw(r Resolver, raw string, opts gotemplates.ResolveOptions) (_ []*policyv1.ObjectTemplate, sensitive bool, _ error) {
	var out []*policyv1.ObjectTemplate
	if !HasManagedTemplate([]byte(raw)) {
		if err := yaml.Unmarshal([]byte(raw), &out); err != nil {
			return nil, false, fmt.Errorf("Error parsing object-templates-raw YAML: %w", err) //nolint:staticcheck // OCM's message
		}
		return out, false, nil
	}
	opts.InputIsYAML = true
	opts.DenylistFunctions = append([]string(nil), opts.DenylistFunctions...)
	res, err := r.ResolveTemplate([]byte(raw), nil, &opts)
	if err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(res.ResolvedJSON, &out); err != nil {
		return nil, false, fmt.Errorf("failed unmarshalling resolved object-templates-raw template: %w", err)
	}
	return out, res.HasSensitiveData, nil
}

// ResolveJSONField resolves the templates of one field of a policy (for
// example an OperatorPolicy's spec.subscription) given as JSON, into out. A
// field without templates is decoded as it is. field names it in the error.
func ResolveJSONField(r Resolver, field string, raw []byte, opts gotemplates.ResolveOptions, out any) error {
	if HasManagedTemplate(raw) {
		opts.DenylistFunctions = append([]string(nil), opts.DenylistFunctions...)
		res, err := r.ResolveTemplate(raw, nil, &opts)
		if err != nil {
			return fmt.Errorf("could not resolve the templates of %s: %w", field, err)
		}
		raw = res.ResolvedJSON
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s is invalid after template resolution: %w", field, err)
	}
	return nil
}
