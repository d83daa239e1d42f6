package templates

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

const (
	// HubStartDelim and HubStopDelim delimit a hub template.
	HubStartDelim = "{{hub"
	HubStopDelim  = "hub}}"

	// DisableAnnotation on a root Policy, when true, turns hub templates off.
	DisableAnnotation = "policy.open-cluster-management.io/disable-templates"
	// TriggerUpdateAnnotation on a root Policy asks for its hub templates to be
	// resolved again; it is never copied to a replica.
	TriggerUpdateAnnotation = "policy.open-cluster-management.io/trigger-update"
	// IVAnnotation holds, base64, the initialization vector a replica's
	// encrypted values were made with; resolved templates that use encryption
	// carry it too.
	IVAnnotation = "policy.open-cluster-management.io/encryption-iv"
	// HubErrorAnnotation on a policy template carries a hub template error to
	// the managed cluster (OCM's propagator writes it; a spoke reports the
	// template NonCompliant with it).
	HubErrorAnnotation = "policy.open-cluster-management.io/hub-templates-error"

	// EncryptionKeySecret is the Secret, in each cluster namespace on the hub,
	// whose data "key" is the cluster's AES-256 key (and "previousKey" the one
	// before the last rotation).
	EncryptionKeySecret = "policy-encryption-key"
	// LastRotatedAnnotation on the key Secret records its last rotation (RFC 3339).
	LastRotatedAnnotation = "policy.open-cluster-management.io/last-rotated"
	// KeySize is the size in bytes of an AES-256 key.
	KeySize = 32
)

// Resolver resolves the templates of one JSON or YAML document. The library's
// *gotemplates.TemplateResolver is one.
type Resolver interface {
	ResolveTemplate(raw []byte, context any, options *gotemplates.ResolveOptions) (gotemplates.TemplateResult, error)
}

// HubContext is the data a hub template sees, as OCM's propagator gives it.
type HubContext struct {
	ManagedClusterName   string
	ManagedClusterLabels map[string]string
	PolicyMetadata       map[string]any
}

// Disabled reports whether annotations turn hub templates off.
func Disabled(annotations map[string]string) bool {
	v, ok := annotations[DisableAnnotation]
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// HasHubTemplate reports whether a policy template holds a hub template.
func HasHubTemplate(objectDefinition []byte) bool {
	return gotemplates.HasTemplate(objectDefinition, HubStartDelim, false)
}

// UsesHubTemplates reports whether any policy template of root holds a hub
// template and templates are not disabled.
func UsesHubTemplates(root *policyv1.Policy) bool {
	if Disabled(root.Annotations) {
		return false
	}
	for _, t := range root.Spec.PolicyTemplates {
		if t != nil && HasHubTemplate(t.ObjectDefinition.Raw) {
			return true
		}
	}
	return false
}

// ServiceAccount returns the ServiceAccount a root's hub templates read as, or
// "" when they read with the hub's own, namespace-restricted access.
func ServiceAccount(root *policyv1.Policy) string {
	if root.Spec.HubTemplateOptions == nil {
		return ""
	}
	return root.Spec.HubTemplateOptions.ServiceAccountName
}

// HubResolveOptions is the access rule of a root's hub templates resolved for
// cluster: without a ServiceAccount, reads are confined to the root's namespace
// and, of cluster-scoped objects, the cluster's own ManagedCluster; with one,
// the ServiceAccount's own permissions decide (the caller's Resolver reads with
// its credentials).
func HubResolveOptions(root *policyv1.Policy, cluster string) gotemplates.ResolveOptions {
	if ServiceAccount(root) != "" {
		return gotemplates.ResolveOptions{}
	}
	return gotemplates.ResolveOptions{
		LookupNamespace: root.Namespace,
		ClusterScopedAllowList: []gotemplates.ClusterScopedObjectIdentifier{{
			Group: "cluster.open-cluster-management.io",
			Kind:  "ManagedCluster",
			Name:  cluster,
		}},
	}
}

// NewHubContext is the context of root's hub templates for cluster.
func NewHubContext(root *policyv1.Policy, cluster string, clusterLabels map[string]string) HubContext {
	return HubContext{
		ManagedClusterName:   cluster,
		ManagedClusterLabels: clusterLabels,
		PolicyMetadata: map[string]any{
			"annotations": root.Annotations,
			"labels":      root.Labels,
			"name":        root.Name,
			"namespace":   root.Namespace,
		},
	}
}

// managedClusterGVK is the kind of .ManagedClusterLabels' source.
var managedClusterGVK = schema.GroupVersionKind{Group: "cluster.open-cluster-management.io", Version: "v1", Kind: "ManagedCluster"}

// ManagedClusterLabelsTransformer is a context transformer (ResolveOptions.
// ContextTransformers) that sets HubContext.ManagedClusterLabels to the labels
// of cluster's ManagedCluster read through the caching query API, which
// watches the ManagedCluster for the template's watcher. Other contexts pass
// through unchanged.
func ManagedClusterLabelsTransformer(cluster string) func(gotemplates.CachingQueryAPI, any) (any, error) {
	return func(api gotemplates.CachingQueryAPI, ctx any) (any, error) {
		hub, ok := ctx.(HubContext)
		if !ok {
			return ctx, nil
		}
		mc, err := api.Get(managedClusterGVK, "", cluster)
		if err != nil {
			return ctx, err
		}
		hub.ManagedClusterLabels = mc.GetLabels()
		return hub, nil
	}
}

// HubInputs is what resolving one replica's hub templates needs besides the
// Resolver.
type HubInputs struct {
	// Root is the root policy; Cluster the managed cluster the replica is for.
	Root    *policyv1.Policy
	Cluster string
	// ClusterLabels are the ManagedCluster's labels (.ManagedClusterLabels).
	ClusterLabels map[string]string
	// ClusterLabelsFromAPI reads .ManagedClusterLabels through the caching
	// query API instead (ManagedClusterLabelsTransformer, for templates that
	// mention them), so that the resolver watches the ManagedCluster and a
	// label change re-resolves the replica, as OCM's propagator does. It needs
	// a caching Resolver and Options.Watcher.
	ClusterLabelsFromAPI bool
	// Options are the caller's resolve options (from HubResolveOptions, with a
	// Watcher or ContextTransformers where the caller's Resolver needs them).
	Options gotemplates.ResolveOptions
	// Key returns the cluster's AES-256 key; it is called only when a template
	// uses encryption. Nil means encryption is unavailable (an error then).
	Key func() ([]byte, error)
	// PreviousIV is the IVAnnotation of the replica last written for the
	// cluster, kept while it is valid so that encrypted values stay stable.
	PreviousIV string
	// Random makes a new initialization vector when PreviousIV is not valid.
	Random io.Reader
	// Context bounds the resolution of all the replica's templates: its
	// deadline (the caller sets it from Limits.Timeout) and cancellation stop
	// it (Bound). Nil means no deadline.
	Context context.Context
	// Limits bound each template's resolution (Bound); unset bounds are the
	// defaults.
	Limits Limits
}

// HubTemplateError is a hub template that could not be resolved.
type HubTemplateError struct {
	// Index is the policy template's position in spec.policy-templates.
	Index int
	// Kind and Name name the policy template (as written, possibly empty).
	Kind, Name string
	Err        error
	// template is the policy template as written: the library's messages
	// quote it whole, Error leaves it out.
	template string
}

func (e *HubTemplateError) Error() string {
	what := fmt.Sprintf("policy-templates[%d]", e.Index)
	if e.Kind != "" || e.Name != "" {
		what = fmt.Sprintf("%s (%s %s)", what, e.Kind, e.Name)
	}
	msg := e.Err.Error()
	if e.template != "" {
		msg = strings.ReplaceAll(msg, " "+e.template+":", ":")
	}
	return fmt.Sprintf("hub templates of %s: %s", what, msg)
}

func (e *HubTemplateError) Unwrap() error { return e.Err }

// ResolveHubTemplates resolves, for in.Cluster, the hub templates of replica's
// policy templates (replica is a replica built from in.Root). When a template
// needs encryption, the replica gets the IVAnnotation (in.PreviousIV while it
// is valid, a new one otherwise), and so does the resolved template. It
// resolves all templates or changes nothing: on error replica is untouched and
// the error is a *HubTemplateError.
//
// When in.Root disables templates, nothing is resolved.
func ResolveHubTemplates(r Resolver, replica *policyv1.Policy, in HubInputs) error {
	if Disabled(in.Root.Annotations) {
		return nil
	}
	bctx := in.Context
	if bctx == nil {
		bctx = context.Background()
	}
	r = Bound(bctx, r, HubResolverConfig(), in.Limits)
	resolved := make([][]byte, len(replica.Spec.PolicyTemplates))
	var iv []byte
	var ivAnnotation string
	var key []byte
	ctx := NewHubContext(in.Root, in.Cluster, in.ClusterLabels)
	for i, t := range replica.Spec.PolicyTemplates {
		if t == nil || !HasHubTemplate(t.ObjectDefinition.Raw) {
			continue
		}
		fail := func(err error) error {
			def, _ := t.DefinitionMeta()
			return &HubTemplateError{Index: i, Kind: def.Kind, Name: def.Name, Err: err, template: string(t.ObjectDefinition.Raw)}
		}
		opts := in.Options
		opts.DenylistFunctions = append([]string(nil), in.Options.DenylistFunctions...)
		if in.ClusterLabelsFromAPI && bytes.Contains(t.ObjectDefinition.Raw, []byte("ManagedClusterLabels")) {
			opts.ContextTransformers = append(slices.Clip(in.Options.ContextTransformers), ManagedClusterLabelsTransformer(in.Cluster))
		}
		reads := secretReads(t.ObjectDefinition.Raw)
		if reads.encrypted {
			if key == nil {
				if in.Key == nil {
					return fail(fmt.Errorf("encryption is not available"))
				}
				k, err := in.Key()
				if err != nil {
					return fail(fmt.Errorf("the encryption key of cluster %s: %w", in.Cluster, err))
				}
				if len(k) != KeySize {
					return fail(fmt.Errorf("the encryption key of cluster %s is %d bytes, not %d", in.Cluster, len(k), KeySize))
				}
				key = k
				var err2 error
				iv, ivAnnotation, err2 = initializationVector(in.PreviousIV, in.Random)
				if err2 != nil {
					return fail(err2)
				}
			}
			opts.EncryptionConfig = gotemplates.EncryptionConfig{
				EncryptionEnabled:    true,
				AESKey:               key,
				InitializationVector: iv,
			}
		}
		res, err := r.ResolveTemplate(t.ObjectDefinition.Raw, ctx, &opts)
		if err != nil {
			return fail(err)
		}
		if res.HasSensitiveData && (!opts.EncryptionEnabled || reads.lookup) {
			// Only fromSecret and copySecretData encrypt what they read: a
			// Secret read any other way would reach the replica in clear.
			return fail(ErrSecretInClear)
		}
		out := res.ResolvedJSON
		if opts.EncryptionEnabled {
			out, err = withAnnotation(out, IVAnnotation, ivAnnotation)
			if err != nil {
				return fail(err)
			}
		}
		resolved[i] = out
	}
	for i, raw := range resolved {
		if raw != nil {
			replica.Spec.PolicyTemplates[i].ObjectDefinition.Raw = raw
			replica.Spec.PolicyTemplates[i].ObjectDefinition.Object = nil
		}
	}
	if ivAnnotation != "" {
		if replica.Annotations == nil {
			replica.Annotations = map[string]string{}
		}
		replica.Annotations[IVAnnotation] = ivAnnotation
	}
	return nil
}

// ErrSecretInClear is a hub template that read a Secret in a way whose value
// the hub cannot encrypt (lookup): it is refused, where OCM's propagator
// writes the value into the replica in clear.
var ErrSecretInClear = errors.New("the template reads a Secret with lookup, whose values the hub cannot encrypt: " +
	"the replica would carry them in clear; read Secrets with fromSecret or copySecretData")

// secretUse is how a policy template's hub templates read Secrets.
type secretUse struct {
	// encrypted: they call fromSecret, copySecretData or protect anywhere
	// (not only right after the delimiter, as the library's UsesEncryption
	// looks for), so everything those return is encrypted.
	encrypted bool
	// lookup: a lookup call may read a Secret (its kind is "Secret" or not
	// a literal).
	lookup bool
}

// UsesEncryption reports whether a policy template's hub templates are
// resolved with encryption: they call fromSecret, copySecretData or protect
// anywhere.
func UsesEncryption(objectDefinition []byte) bool {
	return secretReads(objectDefinition).encrypted
}

// secretReads reads a policy template's hub templates for how they read
// Secrets. A template that does not parse is left to the library's own
// check (its resolution fails anyway).
func secretReads(raw []byte) secretUse {
	yml, err := gotemplates.JSONToYAML(raw)
	if err != nil {
		return secretUse{encrypted: gotemplates.UsesEncryption(raw, HubStartDelim, HubStopDelim)}
	}
	in, err := instrument(string(yml), HubStartDelim, HubStopDelim)
	if err != nil {
		return secretUse{encrypted: gotemplates.UsesEncryption(raw, HubStartDelim, HubStopDelim)}
	}
	return secretUse{encrypted: in.calls["fromSecret"] || in.calls["copySecretData"] || in.calls["protect"],
		lookup: in.lookupMayReadSecret}
}

// initializationVector returns the previous IV when it is valid, or a
// new one read from random, with its annotation value.
func initializationVector(previous string, random io.Reader) ([]byte, string, error) {
	if iv, err := base64.StdEncoding.DecodeString(previous); err == nil && len(iv) == gotemplates.IVSize {
		return iv, previous, nil
	}
	if random == nil {
		return nil, "", fmt.Errorf("no source of randomness for an initialization vector")
	}
	iv := make([]byte, gotemplates.IVSize)
	if _, err := io.ReadFull(random, iv); err != nil {
		return nil, "", fmt.Errorf("making an initialization vector: %w", err)
	}
	return iv, base64.StdEncoding.EncodeToString(iv), nil
}

// withAnnotation sets an annotation on a JSON object.
func withAnnotation(raw []byte, key, value string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("the resolved template is not an object: %w", err)
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[key] = value
	return json.Marshal(obj)
}
