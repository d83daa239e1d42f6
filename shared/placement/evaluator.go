package placement

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Evaluator evaluates every placement policy of the fleet against the cluster
// inventory. Load swaps in a new set of policies atomically, compiling only the
// policies whose text changed; the inventory changes (SetClusters, PutCluster,
// DeleteCluster) compile nothing. Evaluate and Explain may run concurrently
// with each other and with both.
type Evaluator struct {
	engines []languageEngine

	mu        sync.Mutex // serialises Load and the inventory changes
	policies  atomic.Pointer[policySet]
	inventory atomic.Pointer[Inventory]
}

type languageEngine struct {
	language Language
	engine   Engine
}

// policySet is one version of the placement policies.
type policySet struct {
	configMaps int
	entries    []*policyEntry // sorted by ID
}

type policyEntry struct {
	id       PolicyID
	language Language
	text     string
	program  Program
	err      *PolicyError // the policy does not compile
}

// New returns an Evaluator with the Rego and CEL engines, no policy and an
// empty inventory.
func New() *Evaluator {
	e := &Evaluator{engines: []languageEngine{{Rego, NewRegoEngine()}, {CEL, NewCELEngine()}}}
	e.policies.Store(&policySet{})
	inv, _ := NewInventory(nil)
	e.inventory.Store(inv)
	return e
}

func (e *Evaluator) engine(l Language) Engine {
	for _, le := range e.engines {
		if le.language == l {
			return le.engine
		}
	}
	return nil
}

// HasPolicies reports whether the last Load found at least one placement
// policy ConfigMap, compiling or not.
func (e *Evaluator) HasPolicies() bool { return e.policies.Load().configMaps > 0 }

// Inventory returns the current inventory.
func (e *Evaluator) Inventory() *Inventory { return e.inventory.Load() }

// SetClusters replaces the inventory.
func (e *Evaluator) SetClusters(ctx context.Context, clusters []Cluster) error {
	inv, err := NewInventory(clusters)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.setInventory(ctx, inv, nil)
}

// PutCluster adds a cluster to the inventory or replaces the one of that name.
func (e *Evaluator) PutCluster(ctx context.Context, c Cluster) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	inv, err := e.inventory.Load().with(c)
	if err != nil {
		return err
	}
	return e.setInventory(ctx, inv, []string{c.Name})
}

// DeleteCluster removes a cluster from the inventory; an unknown name is no
// error.
func (e *Evaluator) DeleteCluster(ctx context.Context, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.setInventory(ctx, e.inventory.Load().without(name), []string{name})
}

func (e *Evaluator) setInventory(ctx context.Context, inv *Inventory, changed []string) error {
	for _, le := range e.engines {
		if err := le.engine.SetInventory(ctx, inv, changed); err != nil {
			return fmt.Errorf("updating the %s engine's inventory: %w", le.language, err)
		}
	}
	e.inventory.Store(inv)
	return nil
}

// Load makes the placement-policy ConfigMaps among cms (see IsPolicy) the
// policies, replacing the previous set atomically, and returns the status of
// each, sorted by name. A policy whose language and text are those of the
// previous set is not compiled again. Policies that do not compile stay in the
// set, so that evaluation fails while they are broken (fail closed).
func (e *Evaluator) Load(ctx context.Context, cms []corev1.ConfigMap) []Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	previous := map[PolicyID]*policyEntry{}
	for _, entry := range e.policies.Load().entries {
		previous[entry.id] = entry
	}
	var policies []corev1.ConfigMap
	for _, cm := range cms {
		if IsPolicy(&cm) {
			policies = append(policies, cm)
		}
	}
	sort.SliceStable(policies, func(i, j int) bool { return policies[i].Name < policies[j].Name })

	set := &policySet{configMaps: len(policies)}
	statuses := make([]Status, 0, len(policies))
	for _, cm := range policies {
		var entries []*policyEntry
		language := Language(cm.Labels[LanguageLabel])
		engine := e.engine(language)
		if engine == nil {
			entries = append(entries, &policyEntry{id: PolicyID{ConfigMap: cm.Name}, err: &PolicyError{
				Policy: PolicyID{ConfigMap: cm.Name}, Field: "metadata.labels[" + LanguageLabel + "]",
				Err: fmt.Errorf("%q is not a policy language, want %s or %s", language, Rego, CEL)}})
		}
		for _, key := range sortedKeys(cm.BinaryData) {
			id := PolicyID{ConfigMap: cm.Name, Key: key}
			entries = append(entries, &policyEntry{id: id, err: &PolicyError{Policy: id, Field: "binaryData",
				Err: errors.New("binaryData is not read: a placement policy is text under data")}})
		}
		if engine != nil {
			for _, key := range sortedKeys(cm.Data) {
				id := PolicyID{ConfigMap: cm.Name, Key: key}
				text := cm.Data[key]
				if old := previous[id]; old != nil && old.language == language && old.text == text {
					entries = append(entries, old)
					continue
				}
				entry := &policyEntry{id: id, language: language, text: text}
				program, err := engine.Compile(ctx, id, text)
				if err != nil {
					entry.err = &PolicyError{Policy: id, Err: err}
				}
				entry.program = program
				entries = append(entries, entry)
			}
		}
		status := Status{ConfigMap: cm.Name}
		for _, entry := range entries {
			if entry.err != nil {
				status.Errors = append(status.Errors, entry.err)
			}
		}
		statuses = append(statuses, status)
		set.entries = append(set.entries, entries...)
	}
	sort.SliceStable(set.entries, func(i, j int) bool { return set.entries[i].id.less(set.entries[j].id) })
	e.policies.Store(set)
	return statuses
}

// Message is a message of a placement policy.
type Message struct {
	Policy PolicyID
	Text   string
}

func (m Message) String() string { return m.Policy.String() + ": " + m.Text }

// Result is the outcome of every placement policy for one resource.
type Result struct {
	// Annotations are the annotations to merge into the resource, the
	// policies' values winning (Apply). When policies set ClustersAnnotation,
	// its value is the intersection of theirs.
	Annotations map[string]string
	// Errors deny the resource when there is any: the policies' messages, and
	// a message for each annotation two policies set to different values.
	Errors []Message
	// Clusters is, from Explain only, the decision for every cluster of the
	// inventory, sorted by name.
	Clusters []Decision
}

// Denied reports whether the resource is denied.
func (r Result) Denied() bool { return len(r.Errors) > 0 }

// Decision says whether the resource may go to a cluster, and why.
type Decision struct {
	Cluster string
	Allowed bool
	Reasons []Reason
}

// Reason is one policy's say on a cluster; a zero Policy means the reason is
// not a policy's (the resource's own annotation, or no policy at all).
type Reason struct {
	Policy  PolicyID
	Allowed bool
	Message string
}

func (r Reason) String() string {
	if r.Policy == (PolicyID{}) {
		return r.Message
	}
	return r.Policy.String() + ": " + r.Message
}

// Evaluate evaluates every placement policy on the resource (its JSON form).
// The error is not nil when a policy does not compile or fails to evaluate (a
// *PolicyError), or when ctx is done first: the caller bounds evaluation time
// with ctx's deadline.
func (e *Evaluator) Evaluate(ctx context.Context, object map[string]any) (Result, error) {
	return e.evaluate(ctx, object, false)
}

// Explain is Evaluate that also decides, for every cluster of the inventory,
// whether the resource may go there and why.
func (e *Evaluator) Explain(ctx context.Context, object map[string]any) (Result, error) {
	return e.evaluate(ctx, object, true)
}

type policyVerdict struct {
	id PolicyID
	Verdict
}

func (e *Evaluator) evaluate(ctx context.Context, object map[string]any, explain bool) (Result, error) {
	set := e.policies.Load()
	var broken []error
	for _, entry := range set.entries {
		if entry.err != nil {
			broken = append(broken, entry.err)
		}
	}
	if len(broken) > 0 {
		return Result{}, errors.Join(broken...)
	}
	inv := e.inventory.Load()
	r := NewResource(object)
	verdicts := make([]policyVerdict, 0, len(set.entries))
	for _, entry := range set.entries {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		v, err := entry.program.Evaluate(ctx, r, explain)
		var policyErr *PolicyError
		switch {
		case err == nil:
		case errors.As(err, &policyErr), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return Result{}, err
		default:
			return Result{}, &PolicyError{Policy: entry.id, Err: err}
		}
		verdicts = append(verdicts, policyVerdict{id: entry.id, Verdict: v})
	}
	result, restrictions, err := merge(verdicts)
	if err != nil {
		return Result{}, err
	}
	if explain {
		result.Clusters = decide(inv, restrictions, r.annotations(), result.Errors)
	}
	return result, nil
}

// restriction is one policy's ClustersAnnotation.
type restriction struct {
	policy   PolicyID
	clusters []string // sorted and unique, as ParseClusters returns them
	excluded map[string][]string
}

// selects reports whether the restriction lists the cluster.
func (r restriction) selects(cluster string) bool {
	_, found := slices.BinarySearch(r.clusters, cluster)
	return found
}

// merge merges the verdicts, in policy order, into a result.
func merge(verdicts []policyVerdict) (Result, []restriction, error) {
	var (
		result       Result
		restrictions []restriction
		setBy        = map[string]PolicyID{}
	)
	for _, v := range verdicts {
		for _, key := range sortedKeys(v.Annotations) {
			value := v.Annotations[key]
			if errs := validation.IsQualifiedName(key); len(errs) > 0 {
				return Result{}, nil, &PolicyError{Policy: v.id, Field: fmt.Sprintf("annotations[%q]", key),
					Err: fmt.Errorf("not an annotation name: %s", errs[0])}
			}
			if result.Annotations == nil {
				result.Annotations = map[string]string{}
			}
			if key == ClustersAnnotation {
				restrictions = append(restrictions, restriction{policy: v.id, clusters: ParseClusters(value), excluded: v.Excluded})
				continue
			}
			if other, ok := setBy[key]; ok && result.Annotations[key] != value {
				result.Errors = append(result.Errors, Message{Policy: v.id, Text: fmt.Sprintf(
					"sets annotation %s to %q, but %s sets it to %q", key, value, other, result.Annotations[key])})
				continue
			}
			setBy[key] = v.id
			result.Annotations[key] = value
		}
		for _, msg := range v.Errors {
			result.Errors = append(result.Errors, Message{Policy: v.id, Text: msg})
		}
	}
	if len(restrictions) > 0 {
		// The clusters every restriction lists, in the first one's (sorted)
		// order.
		allowed := restrictions[0].clusters
		for _, r := range restrictions[1:] {
			allowed = slices.DeleteFunc(slices.Clone(allowed), func(name string) bool { return !r.selects(name) })
		}
		result.Annotations[ClustersAnnotation] = FormatClusters(allowed)
	}
	return result, restrictions, nil
}

// decide explains, for every cluster of the inventory, whether the resource
// may go there: the policies' ClustersAnnotations all list it; without any,
// the resource's own ClustersAnnotation lists it; without either, it may. A
// denied resource goes nowhere.
func decide(inv *Inventory, restrictions []restriction, own map[string]string, denials []Message) []Decision {
	ownValue, hasOwn := own[ClustersAnnotation]
	ownClusters := map[string]bool{}
	for _, n := range ParseClusters(ownValue) {
		ownClusters[n] = true
	}
	decisions := make([]Decision, 0, len(inv.Clusters()))
	for _, c := range inv.Clusters() {
		d := Decision{Cluster: c.Name, Allowed: true}
		switch {
		case len(restrictions) > 0:
			for _, r := range restrictions {
				if r.selects(c.Name) {
					d.Reasons = append(d.Reasons, Reason{Policy: r.policy, Allowed: true, Message: "selects the cluster"})
					continue
				}
				d.Allowed = false
				reasons := append([]string(nil), r.excluded[c.Name]...)
				sort.Strings(reasons)
				if len(reasons) == 0 {
					reasons = []string{"does not select the cluster"}
				}
				for _, msg := range reasons {
					d.Reasons = append(d.Reasons, Reason{Policy: r.policy, Message: msg})
				}
			}
		case hasOwn:
			d.Allowed = ownClusters[c.Name]
			msg := "the resource's own " + ClustersAnnotation + " annotation lists the cluster"
			if !d.Allowed {
				msg = "the resource's own " + ClustersAnnotation + " annotation does not list the cluster"
			}
			d.Reasons = append(d.Reasons, Reason{Allowed: d.Allowed, Message: msg})
		default:
			d.Reasons = append(d.Reasons, Reason{Allowed: true, Message: "no placement policy restricts where the resource goes"})
		}
		for _, m := range denials {
			d.Allowed = false
			d.Reasons = append(d.Reasons, Reason{Policy: m.Policy, Message: "denies the resource: " + m.Text})
		}
		decisions = append(decisions, d)
	}
	return decisions
}
