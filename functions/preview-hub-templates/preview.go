package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

const (
	// PreviewOfAnnotation marks a preview item, this function's output, with
	// the namespace/name of the Policy it previews.
	PreviewOfAnnotation = "fleetpolicy.io/preview-of"
	// previewDir is where kpt writes the previews: one file per cluster and
	// Policy.
	previewDir = "preview-hub-templates"

	// maxReplicaBytes is the largest replica a hub can store (etcd's default
	// request limit, 1.5 MiB): a larger rendering is an error.
	maxReplicaBytes = 3 << 19

	// Redacted replaces an encrypted value; RedactedSecret a Secret's value
	// found in clear.
	Redacted       = "$ocm_encrypted:<redacted>"
	RedactedSecret = "<redacted>"
	// ivPlaceholder is the encryption-iv annotation of a preview: the hub
	// makes a random one per replica.
	ivPlaceholder = "<made by the hub>"
	// minSecretValue is the shortest Secret value looked for in clear in a
	// rendering: shorter ones would match innocent text.
	minSecretValue = 6
)

// encrypted matches a value the library encrypted.
var encrypted = regexp.MustCompile(`\$ocm_encrypted:[A-Za-z0-9+/=]+`)

// zeroIV is the initialization vector of every preview, so that the output
// does not change from run to run; the key is random and thrown away.
var zeroIV = base64.StdEncoding.EncodeToString(make([]byte, gotemplates.IVSize))

// rootPolicy is a root Policy of the package.
type rootPolicy struct {
	item   *fn.KubeObject
	policy *policyv1.Policy
}

// cluster is a ManagedCluster of the package.
type cluster struct {
	name   string
	labels map[string]string
}

// secretValue is a value of a Secret of the package, base64 or decoded.
type secretValue struct {
	value, from string
}

// inputs are what a preview is made from.
type inputs struct {
	policies []rootPolicy
	clusters []cluster
	objects  []unstructured.Unstructured
	secrets  []secretValue
	sets     []*policyv1beta1.PolicySet
	// kept are the items that pass through: all but the previews of an
	// earlier run.
	kept    fn.KubeObjects
	results fn.Results
}

func process(rl *fn.ResourceList) error {
	cfg, limits, err := readConfig(rl.FunctionConfig)
	if err != nil {
		return err
	}
	in := read(rl.Items)
	policies, errs := selectPolicies(in.policies, cfg.Policies)
	if len(errs) > 0 {
		return krm.ConfigError(rl.FunctionConfig, errs)
	}
	clusters, errs := selectClusters(in.clusters, cfg.Clusters)
	if len(errs) > 0 {
		return krm.ConfigError(rl.FunctionConfig, errs)
	}
	key := make([]byte, templates.KeySize)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	p := &previewer{in: in, client: newInventoryClient(in.objects), key: key, limits: limits,
		sets: dependency.IndexPolicySets(in.sets)}
	var previews fn.KubeObjects
	for _, root := range policies {
		out, stop := p.preview(root, clusters)
		previews = append(previews, out...)
		if stop {
			break
		}
	}
	rl.Results = append(rl.Results, in.results...)
	rl.Items = in.kept
	if rl.Results.ExitCode() == 0 {
		rl.Items = append(rl.Items, previews...)
	}
	return nil
}

// read sorts the items: previews of an earlier run (dropped), root Policies,
// ManagedClusters, and the inventory every template may read (every item
// that is not local-config).
func read(items fn.KubeObjects) *inputs {
	in := &inputs{}
	for _, item := range items {
		if isLocalConfig(item) {
			if krm.AnnotationOf(item, PreviewOfAnnotation) == "" {
				in.kept = append(in.kept, item)
			}
			continue
		}
		in.kept = append(in.kept, item)
		obj, err := krm.Object(item)
		if err != nil {
			in.results = append(in.results, krm.Unreadable(item, err))
			continue
		}
		u := unstructured.Unstructured{Object: obj}
		withoutOrchestratorAnnotations(&u)
		in.objects = append(in.objects, u)
		gk := u.GroupVersionKind().GroupKind()
		switch {
		case gk.Group == policyv1.GroupVersion.Group && gk.Kind == "Policy":
			p := &policyv1.Policy{}
			if err := krm.Decode(item, p); err != nil {
				in.results = append(in.results, krm.Unreadable(item, err))
				continue
			}
			// The replica copies them, and a template reads them
			// (.PolicyMetadata): as on the hub, they hold the user's only.
			p.Annotations = withoutOrchestrator(p.Annotations)
			if !replication.IsReplica(p) {
				in.policies = append(in.policies, rootPolicy{item, p})
			}
		case gk.Group == policyv1beta1.GroupVersion.Group && gk.Kind == "PolicySet":
			s := &policyv1beta1.PolicySet{}
			if err := krm.Decode(item, s); err != nil {
				in.results = append(in.results, krm.Unreadable(item, err))
				continue
			}
			in.sets = append(in.sets, s)
		case gk.Group == "cluster.open-cluster-management.io" && gk.Kind == "ManagedCluster":
			in.clusters = append(in.clusters, cluster{name: u.GetName(), labels: u.GetLabels()})
		case gk.Group == "" && gk.Kind == "Secret":
			in.secrets = append(in.secrets, secretValues(u)...)
		}
	}
	slices.SortStableFunc(in.clusters, func(a, b cluster) int { return strings.Compare(a.name, b.name) })
	return in
}

// isLocalConfig reads the local-config annotation as kpt does (any value but
// "" and "false"), following YAML aliases.
func isLocalConfig(item *fn.KubeObject) bool {
	v := krm.AnnotationOf(item, fn.KptLocalConfig)
	return v != "" && v != "false"
}

// withoutOrchestratorAnnotations removes what kustomize and kpt add to an
// item: a template reading the object sees it as the hub holds it.
func withoutOrchestratorAnnotations(u *unstructured.Unstructured) {
	annotations := withoutOrchestrator(u.GetAnnotations())
	if len(annotations) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
		return
	}
	u.SetAnnotations(annotations)
}

// withoutOrchestrator removes the orchestrators' annotations from annotations.
func withoutOrchestrator(annotations map[string]string) map[string]string {
	maps.DeleteFunc(annotations, func(k, _ string) bool { return krm.IsOrchestratorAnnotation(k) })
	return annotations
}

// secretValues are the values of a Secret long enough to be looked for.
func secretValues(u unstructured.Unstructured) []secretValue {
	var out []secretValue
	from := fmt.Sprintf("Secret %s/%s", u.GetNamespace(), u.GetName())
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	for k, v := range data {
		out = append(out, secretValue{v, from + " data." + k})
		if decoded, err := base64.StdEncoding.DecodeString(v); err == nil {
			out = append(out, secretValue{string(decoded), from + " data." + k})
		}
	}
	stringData, _, _ := unstructured.NestedStringMap(u.Object, "stringData")
	for k, v := range stringData {
		out = append(out, secretValue{v, from + " stringData." + k})
	}
	out = slices.DeleteFunc(out, func(s secretValue) bool { return len(s.value) < minSecretValue })
	// The longest first, so that a value holding another is redacted whole.
	slices.SortStableFunc(out, func(a, b secretValue) int { return len(b.value) - len(a.value) })
	return out
}

// selectPolicies returns the Policies to preview: those with hub templates,
// or those filter names, each of which must name one.
func selectPolicies(policies []rootPolicy, filter []string) ([]rootPolicy, field.ErrorList) {
	if len(filter) > 0 {
		return krm.SelectNamed(policies, func(p rootPolicy) (string, string) {
			return p.policy.Namespace, p.policy.Name
		}, field.NewPath("policies"), filter)
	}
	var out []rootPolicy
	for _, p := range policies {
		if templates.UsesHubTemplates(p.policy) {
			out = append(out, p)
		}
	}
	return out, nil
}

// selectClusters returns the clusters to preview for: every one, or those
// named, each of which must be in the package.
func selectClusters(clusters []cluster, names []string) ([]cluster, field.ErrorList) {
	if len(names) == 0 {
		return clusters, nil
	}
	var out []cluster
	var errs field.ErrorList
	for i, name := range names {
		j := slices.IndexFunc(clusters, func(c cluster) bool { return c.name == name })
		if j < 0 {
			errs = append(errs, &field.Error{Type: field.ErrorTypeNotFound, Field: field.NewPath("clusters").Index(i).String(),
				BadValue: name, Detail: fmt.Sprintf("no ManagedCluster %q in the input", name)})
			continue
		}
		out = append(out, clusters[j])
	}
	return out, errs
}

// previewer renders the previews of one ResourceList.
type previewer struct {
	in     *inputs
	client *inventoryClient
	key    []byte
	limits templates.Limits
	sets   dependency.PolicySets
}

func (p *previewer) report(root rootPolicy, severity fn.Severity, field, message string) {
	p.in.results = append(p.in.results, krm.ObjectResult(root.item, severity, field, message))
}

// preview renders root's replica for each cluster. stop is true when a
// resolution did not end in time: it still runs, and nothing more is
// started.
func (p *previewer) preview(root rootPolicy, clusters []cluster) (previews fn.KubeObjects, stop bool) {
	policy := root.policy
	switch {
	case templates.Disabled(policy.Annotations):
		p.report(root, fn.Info, "metadata.annotations", "hub templates are disabled ("+templates.DisableAnnotation+"): nothing to preview")
		return nil, false
	case !templates.UsesHubTemplates(policy):
		p.report(root, fn.Info, "", "holds no hub template: nothing to preview")
		return nil, false
	case len(clusters) == 0:
		p.report(root, fn.Warning, "", "the package holds no ManagedCluster to preview its hub templates for")
		return nil, false
	}
	if sa := templates.ServiceAccount(policy); sa != "" {
		p.report(root, fn.Warning, "spec.hubTemplateOptions.serviceAccountName", fmt.Sprintf(
			"the hub resolves these templates with the permissions of ServiceAccount %s/%s, which a preview cannot check offline: "+
				"this preview reads every namespace of the package; on the hub a template reading what %s may not read fails",
			policy.Namespace, sa, sa))
	}
	encrypts := false
	for _, t := range policy.Spec.PolicyTemplates {
		if t != nil && templates.UsesEncryption(t.ObjectDefinition.Raw) {
			encrypts = true
		}
	}
	var rendered []string
	for _, c := range clusters {
		replica, err := p.resolve(policy, c)
		if errors.Is(err, errTimedOut) {
			p.report(root, fn.Error, "", fmt.Sprintf("cluster %s: %v; the preview stops here", c.name, err))
			return previews, true
		}
		if err != nil {
			field := ""
			var tmplErr *templates.HubTemplateError
			if errors.As(err, &tmplErr) {
				field = fmt.Sprintf("spec.policy-templates[%d].objectDefinition", tmplErr.Index)
			}
			message := err.Error()
			if errors.Is(err, gotemplates.ErrMissingAPIResource) {
				message += " (the preview serves the kinds the package holds and the hub's built-in ones)"
			}
			p.report(root, fn.Error, field, fmt.Sprintf("cluster %s: %s", c.name, message))
			continue
		}
		item, leaks, err := p.previewItem(replica, policy)
		if err != nil {
			p.report(root, fn.Error, "", fmt.Sprintf("cluster %s: %v", c.name, err))
			continue
		}
		for _, leak := range leaks {
			p.report(root, fn.Warning, leak.field, fmt.Sprintf(
				"cluster %s: the rendering holds the value of %s in clear (read by lookup, which the hub does not encrypt): "+
					"the hub would write it in clear into the replica; it is redacted here. Read Secrets with fromSecret or copySecretData",
				c.name, leak.from))
		}
		previews = append(previews, item)
		rendered = append(rendered, c.name)
	}
	if len(rendered) > 0 {
		message := fmt.Sprintf("hub templates rendered for %d clusters: %s", len(rendered), strings.Join(rendered, ", "))
		if encrypts {
			message += fmt.Sprintf("; values of fromSecret, copySecretData and protect are shown as %s: "+
				"the hub encrypts them with each cluster's key, which a preview does not have", Redacted)
		}
		p.report(root, fn.Info, "", message)
	}
	return previews, false
}

// errTimedOut is a resolution that did not end within the timeout.
var errTimedOut = errors.New("the hub templates did not resolve in time")

// resolve renders the replica of policy for c with the hub's resolver over the
// inventory, within p.limits, as the hub does: a resolution past its deadline
// stops (templates.Bound). A single call of the library's that outlasts it
// (a resolution that does not return a second after its deadline) goes on in
// its goroutine, and the caller stops.
func (p *previewer) resolve(policy *policyv1.Policy, c cluster) (*policyv1.Policy, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.limits.Timeout)
	defer cancel()
	type outcome struct {
		replica *policyv1.Policy
		err     error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{err: fmt.Errorf("the template library failed: %v", r)}
			}
		}()
		resolver, err := gotemplates.NewResolverWithClients(p.client, p.client, templates.HubResolverConfig())
		if err != nil {
			done <- outcome{err: err}
			return
		}
		replica := replication.Build(policy, c.name, policy.Spec.RemediationAction, p.sets)
		err = templates.ResolveHubTemplates(resolver, replica, templates.HubInputs{
			Root:          policy,
			Cluster:       c.name,
			ClusterLabels: c.labels,
			Options:       templates.HubResolveOptions(policy, c.name),
			Key:           func() ([]byte, error) { return p.key, nil },
			PreviousIV:    zeroIV,
			Random:        rand.Reader,
			Context:       ctx,
			Limits:        p.limits,
		})
		done <- outcome{replica, err}
	}()
	var be *templates.BoundError
	select {
	case o := <-done:
		if !errors.As(o.err, &be) || be.Bound != "time" {
			return o.replica, o.err
		}
	case <-time.After(p.limits.Timeout + time.Second):
	}
	return nil, fmt.Errorf("%w (%s): a template without bound, such as a range over a huge list? "+
		"Raise timeout in the functionConfig if it is only slow", errTimedOut, p.limits.Timeout)
}

// leak is a Secret's value found in clear in a rendering.
type leak struct{ field, from string }

// previewItem is the item of a rendered replica: its encrypted values and any
// Secret value in clear redacted, marked local-config and as a preview of
// root, with a path of its own for kpt. It refuses a replica larger than a hub
// can store.
func (p *previewer) previewItem(replica, root *policyv1.Policy) (*fn.KubeObject, []leak, error) {
	var leaks []leak
	for i, t := range replica.Spec.PolicyTemplates {
		if t == nil {
			continue
		}
		var v any
		if err := json.Unmarshal(t.ObjectDefinition.Raw, &v); err != nil {
			return nil, nil, fmt.Errorf("policy-templates[%d]: the rendering is not JSON: %w", i, err)
		}
		field := fmt.Sprintf("spec.policy-templates[%d].objectDefinition", i)
		v = p.redact(v, field, &leaks)
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, nil, err
		}
		t.ObjectDefinition.Raw = raw
	}
	if _, found := replica.Annotations[templates.IVAnnotation]; found {
		replica.Annotations[templates.IVAnnotation] = ivPlaceholder
	}
	out := struct {
		APIVersion        string `json:"apiVersion"`
		Kind              string `json:"kind"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              policyv1.PolicySpec `json:"spec"`
	}{replica.APIVersion, replica.Kind, replica.ObjectMeta, replica.Spec}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	path := fmt.Sprintf("%s/%s/%s.yaml", previewDir, replica.Namespace, replica.Name)
	out.Annotations[fn.KptLocalConfig] = "true"
	out.Annotations[PreviewOfAnnotation] = root.Namespace + "/" + root.Name
	out.Annotations[kioutil.PathAnnotation] = path
	out.Annotations[kioutil.LegacyPathAnnotation] = path //nolint:staticcheck // kustomize reads the legacy one
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, nil, err
	}
	if len(raw) > maxReplicaBytes {
		return nil, nil, fmt.Errorf("the rendered replica is %d bytes, more than a hub stores (%d): the hub could not write it", len(raw), maxReplicaBytes)
	}
	node, err := krm.NodeFromJSON(raw)
	if err != nil {
		return nil, nil, err
	}
	return fn.MoveToKubeObject(yaml.NewRNode(node)), leaks, nil
}

// redact replaces, in the strings of v (keys included), every encrypted value
// by Redacted, the placeholder IV by ivPlaceholder and every Secret value of
// the package by RedactedSecret, recording the latter as leaks.
func (p *previewer) redact(v any, path string, leaks *[]leak) any {
	redactString := func(s, path string) string {
		if s == zeroIV {
			return ivPlaceholder
		}
		s = encrypted.ReplaceAllLiteralString(s, Redacted)
		for _, secret := range p.in.secrets {
			if strings.Contains(s, secret.value) {
				s = strings.ReplaceAll(s, secret.value, RedactedSecret)
				*leaks = append(*leaks, leak{path, secret.from})
			}
		}
		return s
	}
	switch v := v.(type) {
	case string:
		return redactString(v, path)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			child := templates.FieldPath(path, k)
			out[redactString(k, child)] = p.redact(e, child, leaks)
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = p.redact(e, fmt.Sprintf("%s[%d]", path, i), leaks)
		}
		return v
	}
	return v
}
