package binding

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

const (
	testNamespace = "policies"
	testPolicy    = "test-policy-1"

	policyGroup    = "policy.open-cluster-management.io"
	appsGroup      = "apps.open-cluster-management.io"
	clusterGroup   = "cluster.open-cluster-management.io"
	inform         = policyv1.RemediationAction("inform")
	enforce        = policyv1.RemediationAction("enforce")
	enforceCapital = policyv1.Enforce
)

// The placement rules of the selective-enforcement examples
// (examples/api/selective-enforcement.yaml).
var exampleDecisions = Decisions{
	rule("placementrule-initial"):  {"A", "B", "C", "D"},
	rule("placementrule-sub"):      {"A", "B"},
	rule("placementrule-sub-2"):    {"E", "F"},
	rule("placementrule-extended"): {"A", "B", "E", "F"},
}

func rule(name string) PlacementRef      { return PlacementRef{Kind: KindPlacementRule, Name: name} }
func placement(name string) PlacementRef { return PlacementRef{Kind: KindPlacement, Name: name} }

func rootPolicy(action policyv1.RemediationAction) *policyv1.Policy {
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testPolicy},
		Spec:       policyv1.PolicySpec{RemediationAction: action},
	}
}

func policySubject(name string) policyv1.Subject {
	return policyv1.Subject{APIGroup: policyGroup, Kind: "Policy", Name: name}
}

func setSubject(name string) policyv1.Subject {
	return policyv1.Subject{APIGroup: policyGroup, Kind: "PolicySet", Name: name}
}

// bind returns a binding of test-policy-1 to ref with no override.
func bind(name string, ref PlacementRef) policyv1.PlacementBinding {
	return policyv1.PlacementBinding{
		ObjectMeta:   metav1.ObjectMeta{Namespace: testNamespace, Name: name},
		PlacementRef: ref.PlacementSubject(),
		Subjects:     []policyv1.Subject{policySubject(testPolicy)},
	}
}

// spelling writes an override onto a binding.
type spelling func(pb *policyv1.PlacementBinding, enforce bool, subFilter *bool)

func ocmSpelling(pb *policyv1.PlacementBinding, enforce bool, subFilter *bool) {
	if enforce {
		pb.BindingOverrides.RemediationAction = "Enforce"
	}
	if subFilter != nil && *subFilter {
		pb.SubFilter = policyv1.Restricted
	}
}

func fleetpolicySpelling(pb *policyv1.PlacementBinding, enforce bool, subFilter *bool) {
	if !enforce && subFilter == nil {
		return
	}
	pb.RemediationActionOverride = &policyv1.RemediationActionOverride{SubFilter: subFilter}
	if enforce {
		pb.RemediationActionOverride.RemediationAction = "enforce"
	}
}

func enforcing(pb policyv1.PlacementBinding) policyv1.PlacementBinding {
	ocmSpelling(&pb, true, nil)
	return pb
}

func restrictedEnforcing(pb policyv1.PlacementBinding) policyv1.PlacementBinding {
	ocmSpelling(&pb, true, ptr(true))
	return pb
}

func bound(name string, action policyv1.RemediationAction, enforcedBy ...string) BoundCluster {
	return BoundCluster{Name: name, RemediationAction: action, EnforcedBy: enforcedBy}
}

func ruleEntry(binding, rule string) *policyv1.Placement {
	return &policyv1.Placement{PlacementBinding: binding, PlacementRule: rule}
}

// TestSelectiveEnforcementExamples runs the five examples of
// examples/api/selective-enforcement.yaml, each written in OCM's spelling and in
// fleetpolicy's own: both must give the same result.
func TestSelectiveEnforcementExamples(t *testing.T) {
	type exampleBinding struct {
		name, rule string
		enforce    bool
		subFilter  *bool
	}
	initial := exampleBinding{name: "initial", rule: "placementrule-initial"}
	tests := []struct {
		name       string
		bindings   []exampleBinding
		want       []BoundCluster
		placements []*policyv1.Placement
	}{
		{
			name:     "example 1: simple selection",
			bindings: []exampleBinding{initial, {name: "sub", rule: "placementrule-sub", enforce: true}},
			want: []BoundCluster{
				bound("A", enforce, "sub"), bound("B", enforce, "sub"),
				bound("C", inform), bound("D", inform),
			},
			placements: []*policyv1.Placement{
				ruleEntry("initial", "placementrule-initial"), ruleEntry("sub", "placementrule-sub"),
			},
		},
		{
			// An override enforces only the clusters its own binding selects (as
			// OCM does), not all of A–F.
			name:     "example 2: no sub filtering",
			bindings: []exampleBinding{initial, {name: "extended", rule: "placementrule-extended", enforce: true, subFilter: ptr(false)}},
			want: []BoundCluster{
				bound("A", enforce, "extended"), bound("B", enforce, "extended"),
				bound("C", inform), bound("D", inform),
				bound("E", enforce, "extended"), bound("F", enforce, "extended"),
			},
			placements: []*policyv1.Placement{
				ruleEntry("extended", "placementrule-extended"), ruleEntry("initial", "placementrule-initial"),
			},
		},
		{
			name:     "example 3: with sub filtering",
			bindings: []exampleBinding{initial, {name: "extended", rule: "placementrule-extended", enforce: true, subFilter: ptr(true)}},
			want: []BoundCluster{
				bound("A", enforce, "extended"), bound("B", enforce, "extended"),
				bound("C", inform), bound("D", inform),
			},
			placements: []*policyv1.Placement{
				ruleEntry("extended", "placementrule-extended"), ruleEntry("initial", "placementrule-initial"),
			},
		},
		{
			name: "example 4: multiple placements with sub filtering",
			bindings: []exampleBinding{
				initial,
				{name: "sub-2", rule: "placementrule-sub-2"},
				{name: "extended", rule: "placementrule-extended", enforce: true, subFilter: ptr(true)},
			},
			want: []BoundCluster{
				bound("A", enforce, "extended"), bound("B", enforce, "extended"),
				bound("C", inform), bound("D", inform),
				bound("E", enforce, "extended"), bound("F", enforce, "extended"),
			},
			placements: []*policyv1.Placement{
				ruleEntry("extended", "placementrule-extended"), ruleEntry("initial", "placementrule-initial"),
				ruleEntry("sub-2", "placementrule-sub-2"),
			},
		},
		{
			name:     "example 5: no overlap",
			bindings: []exampleBinding{initial, {name: "sub-2", rule: "placementrule-sub-2", enforce: true, subFilter: ptr(true)}},
			want: []BoundCluster{
				bound("A", inform), bound("B", inform), bound("C", inform), bound("D", inform),
			},
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial")},
		},
	}
	spellings := []struct {
		name  string
		write spelling
	}{{"ocm", ocmSpelling}, {"fleetpolicy", fleetpolicySpelling}}
	for _, tt := range tests {
		for _, sp := range spellings {
			t.Run(tt.name+"/"+sp.name, func(t *testing.T) {
				var bindings []policyv1.PlacementBinding
				for _, b := range tt.bindings {
					pb := bind(b.name, rule(b.rule))
					sp.write(&pb, b.enforce, b.subFilter)
					bindings = append(bindings, pb)
				}
				got, err := Resolve(rootPolicy(inform), nil, bindings, exampleDecisions)
				if err != nil {
					t.Fatalf("Resolve() error = %v", err)
				}
				if !reflect.DeepEqual(got.Clusters, tt.want) {
					t.Errorf("Clusters =\n%+v\nwant\n%+v", got.Clusters, tt.want)
				}
				if !reflect.DeepEqual(got.Placements, tt.placements) {
					t.Errorf("Placements = %s, want %s", placementsString(got.Placements), placementsString(tt.placements))
				}
			})
		}
	}
}

func placementsString(ps []*policyv1.Placement) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, "{"+p.PlacementBinding+" pl="+p.Placement+" plr="+p.PlacementRule+" set="+p.PolicySet+"}")
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func TestResolve(t *testing.T) {
	inSet := func(name string, members ...string) policyv1beta1.PolicySet {
		set := policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name}}
		for _, m := range members {
			set.Spec.Policies = append(set.Spec.Policies, policyv1.NonEmptyString(m))
		}
		return set
	}
	withSubjects := func(pb policyv1.PlacementBinding, subjects ...policyv1.Subject) policyv1.PlacementBinding {
		pb.Subjects = subjects
		return pb
	}
	withRollout := func(p *policyv1.Policy, rollout clusterv1alpha1.RolloutType) *policyv1.Policy {
		p.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: rollout}
		return p
	}
	disabled := func(p *policyv1.Policy) *policyv1.Policy {
		p.Spec.Disabled = true
		return p
	}
	initial := bind("initial", rule("placementrule-initial"))
	sub := enforcing(bind("sub", rule("placementrule-sub")))
	allInform := []BoundCluster{bound("A", inform), bound("B", inform), bound("C", inform), bound("D", inform)}

	tests := []resolveCase{
		{
			name:       "root enforce keeps its own value and wins",
			policy:     rootPolicy(enforceCapital),
			bindings:   []policyv1.PlacementBinding{initial, sub},
			want:       []BoundCluster{bound("A", enforceCapital, "sub"), bound("B", enforceCapital, "sub"), bound("C", enforceCapital), bound("D", enforceCapital)},
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial"), ruleEntry("sub", "placementrule-sub")},
		},
		{
			name:       "root without remediationAction: override sets enforce, others keep empty",
			policy:     rootPolicy(""),
			bindings:   []policyv1.PlacementBinding{initial, sub},
			want:       []BoundCluster{bound("A", enforce, "sub"), bound("B", enforce, "sub"), bound("C", ""), bound("D", "")},
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial"), ruleEntry("sub", "placementrule-sub")},
		},
		{
			name:   "several enforcing bindings give one result listing each once",
			policy: rootPolicy(inform),
			bindings: []policyv1.PlacementBinding{
				initial, sub,
				restrictedEnforcing(bind("restricted", rule("placementrule-extended"))),
				enforcing(withSubjects(bind("twice", rule("placementrule-sub")), policySubject(testPolicy), policySubject(testPolicy))),
			},
			decisions: Decisions{
				rule("placementrule-initial"):  {"A", "B", "C", "D"},
				rule("placementrule-sub"):      {"A", "B", "A"},
				rule("placementrule-extended"): {"A", "B", "E", "F"},
			},
			want: []BoundCluster{
				bound("A", enforce, "restricted", "sub", "twice"), bound("B", enforce, "restricted", "sub", "twice"),
				bound("C", inform), bound("D", inform),
			},
			placements: []*policyv1.Placement{
				ruleEntry("initial", "placementrule-initial"), ruleEntry("restricted", "placementrule-extended"),
				ruleEntry("sub", "placementrule-sub"), ruleEntry("twice", "placementrule-sub"),
			},
		},
		{
			name:   "cluster left the base placement: unbound although its restricted binding enforces it",
			policy: rootPolicy(inform),
			bindings: []policyv1.PlacementBinding{
				bind("base", placement("base")),
				restrictedEnforcing(bind("enf", placement("enf"))),
			},
			decisions:  Decisions{placement("base"): {"managed1"}, placement("enf"): {"managed1", "managed2", "managed3"}},
			want:       []BoundCluster{bound("managed1", enforce, "enf")},
			placements: []*policyv1.Placement{{PlacementBinding: "base", Placement: "base"}, {PlacementBinding: "enf", Placement: "enf"}},
		},
		{
			name:       "bindingOverrides removed: all inform",
			policy:     rootPolicy(inform),
			bindings:   []policyv1.PlacementBinding{initial, bind("sub", rule("placementrule-sub"))},
			want:       allInform,
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial"), ruleEntry("sub", "placementrule-sub")},
		},
		{
			name:   "restricted binding without override is a no-op",
			policy: rootPolicy(inform),
			bindings: []policyv1.PlacementBinding{initial, func() policyv1.PlacementBinding {
				pb := bind("narrow", rule("placementrule-extended"))
				pb.SubFilter = policyv1.Restricted
				return pb
			}()},
			want:       allInform,
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial"), ruleEntry("narrow", "placementrule-extended")},
			reads:      []PlacementRef{rule("placementrule-extended"), rule("placementrule-initial")},
		},
		{
			name:       "rolloutStrategy Progressive ignores overrides",
			policy:     withRollout(rootPolicy(inform), clusterv1alpha1.Progressive),
			bindings:   []policyv1.PlacementBinding{initial, sub, restrictedEnforcing(bind("restricted", rule("placementrule-extended")))},
			want:       allInform,
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial"), ruleEntry("restricted", "placementrule-extended"), ruleEntry("sub", "placementrule-sub")},
		},
		{
			name:       "rolloutStrategy ProgressivePerGroup ignores overrides",
			policy:     withRollout(rootPolicy(inform), clusterv1alpha1.ProgressivePerGroup),
			bindings:   []policyv1.PlacementBinding{initial, sub},
			want:       allInform,
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial"), ruleEntry("sub", "placementrule-sub")},
		},
		{
			name:       "rolloutStrategy All keeps overrides",
			policy:     withRollout(rootPolicy(inform), clusterv1alpha1.All),
			bindings:   []policyv1.PlacementBinding{initial, sub},
			want:       []BoundCluster{bound("A", enforce, "sub"), bound("B", enforce, "sub"), bound("C", inform), bound("D", inform)},
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial"), ruleEntry("sub", "placementrule-sub")},
		},
		{
			name:   "disabled policy binds nothing but lists its bindings",
			policy: disabled(rootPolicy(inform)),
			sets:   []policyv1beta1.PolicySet{inSet("set", testPolicy)},
			bindings: []policyv1.PlacementBinding{
				initial, sub,
				withSubjects(bind("via-set", rule("placementrule-sub-2")), setSubject("set")),
				restrictedEnforcing(bind("restricted", rule("placementrule-extended"))),
			},
			want: nil,
			placements: []*policyv1.Placement{
				ruleEntry("initial", "placementrule-initial"), ruleEntry("sub", "placementrule-sub"),
				{PlacementBinding: "via-set", PlacementRule: "placementrule-sub-2", PolicySet: "set"},
			},
		},
		{
			name:       "placement without decisions binds nothing but is listed",
			policy:     rootPolicy(inform),
			bindings:   []policyv1.PlacementBinding{initial, enforcing(bind("missing", placement("missing")))},
			want:       allInform,
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial"), {PlacementBinding: "missing", Placement: "missing"}},
		},
		{
			name:   "invalid placementRef is ignored",
			policy: rootPolicy(inform),
			bindings: []policyv1.PlacementBinding{
				initial,
				func() policyv1.PlacementBinding { // PlacementRule with the cluster API group
					pb := enforcing(bind("wrong-group", rule("placementrule-extended")))
					pb.PlacementRef.APIGroup = clusterGroup
					return pb
				}(),
				func() policyv1.PlacementBinding { // Placement with the apps API group
					pb := bind("wrong-kind", placement("placementrule-sub-2"))
					pb.PlacementRef.APIGroup = appsGroup
					return pb
				}(),
				func() policyv1.PlacementBinding { // no name
					pb := bind("no-name", rule(""))
					return pb
				}(),
			},
			decisions: Decisions{
				rule("placementrule-initial"):    {"A", "B", "C", "D"},
				rule("placementrule-extended"):   {"A", "B", "E", "F"},
				placement("placementrule-sub-2"): {"E", "F"},
				rule(""):                         {"G"},
			},
			want:       allInform,
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial")},
			reads:      []PlacementRef{rule("placementrule-initial")},
		},
		{
			name:   "only policy-group subjects naming this policy, in this namespace, bind",
			policy: rootPolicy(inform),
			bindings: []policyv1.PlacementBinding{
				initial,
				withSubjects(bind("other-group", rule("placementrule-sub-2")), policyv1.Subject{APIGroup: appsGroup, Kind: "Policy", Name: testPolicy}),
				withSubjects(bind("other-policy", rule("placementrule-sub-2")), policySubject("test-policy-2")),
				withSubjects(bind("other-kind", rule("placementrule-sub-2")), policyv1.Subject{APIGroup: policyGroup, Kind: "Placement", Name: testPolicy}),
				func() policyv1.PlacementBinding {
					pb := bind("other-namespace", rule("placementrule-sub-2"))
					pb.Namespace = "elsewhere"
					return pb
				}(),
			},
			want:       allInform,
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial")},
			reads:      []PlacementRef{rule("placementrule-initial")},
		},
		{
			name:   "PolicySet subjects bind their member policies",
			policy: rootPolicy(inform),
			sets: []policyv1beta1.PolicySet{
				inSet("set", "test-policy-0", testPolicy),
				inSet("set-2", testPolicy),
				inSet("other-set", "test-policy-2"),
				func() policyv1beta1.PolicySet {
					set := inSet("foreign-set", testPolicy)
					set.Namespace = "elsewhere"
					return set
				}(),
			},
			bindings: []policyv1.PlacementBinding{
				// The set twice gives one entry; the direct Policy subject gives its own.
				withSubjects(bind("via-set", rule("placementrule-initial")), setSubject("set"), setSubject("set"), policySubject(testPolicy), setSubject("set-2")),
				enforcing(withSubjects(bind("sub-via-set", rule("placementrule-sub-2")), setSubject("set-2"))),
				enforcing(withSubjects(bind("not-member", rule("placementrule-extended")), setSubject("other-set"))),
				enforcing(withSubjects(bind("foreign", rule("placementrule-extended")), setSubject("foreign-set"))),
				enforcing(withSubjects(bind("no-such-set", rule("placementrule-extended")), setSubject("absent"))),
			},
			want: []BoundCluster{
				bound("A", inform), bound("B", inform), bound("C", inform), bound("D", inform),
				bound("E", enforce, "sub-via-set"), bound("F", enforce, "sub-via-set"),
			},
			placements: []*policyv1.Placement{
				{PlacementBinding: "sub-via-set", PlacementRule: "placementrule-sub-2", PolicySet: "set-2"},
				ruleEntry("via-set", "placementrule-initial"),
				{PlacementBinding: "via-set", PlacementRule: "placementrule-initial", PolicySet: "set"},
				{PlacementBinding: "via-set", PlacementRule: "placementrule-initial", PolicySet: "set-2"},
			},
			reads: []PlacementRef{rule("placementrule-initial"), rule("placementrule-sub-2")},
		},
		{
			name:       "empty cluster names in decisions are skipped",
			policy:     rootPolicy(inform),
			bindings:   []policyv1.PlacementBinding{initial},
			decisions:  Decisions{rule("placementrule-initial"): {"", "A"}},
			want:       []BoundCluster{bound("A", inform)},
			placements: []*policyv1.Placement{ruleEntry("initial", "placementrule-initial")},
		},
		{
			name:       "no bindings",
			policy:     rootPolicy(inform),
			want:       nil,
			placements: nil,
		},
	}
	for _, tt := range append(tests, exclusionCases()...) {
		t.Run(tt.name, func(t *testing.T) {
			decisions := tt.decisions
			if decisions == nil {
				decisions = exampleDecisions
			}
			got, err := Resolve(tt.policy, tt.sets, tt.bindings, decisions)
			if err != nil {
				t.Fatalf("Resolve() error = %v", err)
			}
			if !reflect.DeepEqual(got.Clusters, tt.want) {
				t.Errorf("Clusters =\n%+v\nwant\n%+v", got.Clusters, tt.want)
			}
			if !reflect.DeepEqual(got.Placements, tt.placements) {
				t.Errorf("Placements = %s, want %s", placementsString(got.Placements), placementsString(tt.placements))
			}
			for ref, clusters := range decisions {
				for _, c := range slices.Concat(clusters, []string{"managed9"}) {
					if want := slices.Contains(tt.excludes[ref], c); got.Excludes(ref, c) != want {
						t.Errorf("Excludes(%v, %s) = %t, want %t", ref, c, !want, want)
					}
				}
			}

			reads := Placements(tt.policy, tt.sets, tt.bindings)
			if tt.reads != nil && !reflect.DeepEqual(reads, tt.reads) {
				t.Errorf("Placements() = %v, want %v", reads, tt.reads)
			}
			for _, entry := range got.Placements {
				if !slices.Contains(reads, RefOfEntry(entry)) {
					t.Errorf("status.placement entry %+v names %v, which Placements() = %v lacks", entry, RefOfEntry(entry), reads)
				}
			}
			onlyRead := Decisions{}
			for _, ref := range reads {
				if clusters, ok := decisions[ref]; ok {
					onlyRead[ref] = clusters
				}
			}
			if fromRead, err := Resolve(tt.policy, tt.sets, tt.bindings, onlyRead); err != nil || !reflect.DeepEqual(fromRead, got) {
				t.Errorf("Resolve() over the decisions of Placements() %v only = %+v, %v; want %+v", reads, fromRead, err, got)
			}
		})
	}
}

// resolveCase is a case of TestResolve.
type resolveCase struct {
	name       string
	policy     *policyv1.Policy
	sets       []policyv1beta1.PolicySet
	bindings   []policyv1.PlacementBinding
	decisions  Decisions // nil: exampleDecisions
	want       []BoundCluster
	placements []*policyv1.Placement
	// excludes lists the (placement, cluster) pairs Resolution.Excludes reports.
	excludes map[PlacementRef][]string
	// reads, when set, are the placements whose decisions Resolve reads
	// (Placements); every case checks that no other decision matters.
	reads []PlacementRef
}

// TestRefOf: OCM reads a placementRef whose kind goes with its API group.
func TestRefOf(t *testing.T) {
	tests := []struct {
		group, kind string
		valid       bool
	}{
		{clusterGroup, KindPlacement, true},
		{appsGroup, KindPlacementRule, true},
		{appsGroup, KindPlacement, false},
		{clusterGroup, KindPlacementRule, false},
		{"", KindPlacement, false},
		{clusterGroup, "ManagedClusterSet", false},
	}
	for _, tt := range tests {
		pb := &policyv1.PlacementBinding{PlacementRef: policyv1.PlacementSubject{APIGroup: tt.group, Kind: tt.kind, Name: "p"}}
		ref, valid := RefOf(pb)
		if valid != tt.valid || ref != (PlacementRef{Kind: tt.kind, Name: "p"}) {
			t.Errorf("RefOf(%s %s) = %v, %t; want %t", tt.group, tt.kind, ref, valid, tt.valid)
		}
		// A valid placementRef is the one PlacementSubject writes for its ref.
		if written := ref.PlacementSubject(); (written == pb.PlacementRef) != tt.valid {
			t.Errorf("%v.PlacementSubject() = %+v, placementRef %+v (valid %t)", ref, written, pb.PlacementRef, tt.valid)
		}
	}
}

// TestSubjects: only subjects of the policy API group and kind Policy or
// PolicySet are read, in order.
func TestSubjects(t *testing.T) {
	pb := &policyv1.PlacementBinding{Subjects: []policyv1.Subject{
		setSubject("set"),
		{APIGroup: appsGroup, Kind: KindPolicy, Name: "other-group"},
		{APIGroup: policyGroup, Kind: "ConfigurationPolicy", Name: "other-kind"},
		policySubject("p"),
		{Kind: KindPolicy, Name: "no-group"},
	}}
	var got []policyv1.Subject
	for s := range Subjects(pb) {
		got = append(got, s)
	}
	if want := []policyv1.Subject{setSubject("set"), policySubject("p")}; !reflect.DeepEqual(got, want) {
		t.Errorf("Subjects() = %+v, want %+v", got, want)
	}
	for s := range Subjects(pb) {
		if s.Name != "set" {
			t.Errorf("Subjects() went on after its consumer stopped, yielding %+v", s)
		}
		break
	}
}

func TestResolveRejectsBadOverrides(t *testing.T) {
	inconsistent := enforcing(bind("inconsistent", rule("placementrule-sub")))
	inconsistent.RemediationActionOverride = &policyv1.RemediationActionOverride{SubFilter: ptr(false)}
	inconsistent.SubFilter = policyv1.Restricted
	inform := bind("inform-override", rule("placementrule-sub-2"))
	inform.BindingOverrides.RemediationAction = "inform"

	bindings := []policyv1.PlacementBinding{bind("initial", rule("placementrule-initial")), inconsistent, inform}
	got, err := Resolve(rootPolicy("inform"), nil, bindings, exampleDecisions)
	if err == nil {
		t.Fatalf("Resolve() = %+v, want an error", got)
	}
	if got != nil {
		t.Errorf("Resolve() returned %+v with its error, want nil", got)
	}
	for _, want := range []string{
		`PlacementBinding policies/inconsistent: remediationActionOverride.subFilter: Invalid value: false: disagrees with subFilter ("restricted")`,
		`PlacementBinding policies/inform-override: bindingOverrides.remediationAction: Unsupported value: "inform"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}

	// A bad binding that does not bind this policy does not stop its resolution.
	unrelated := inconsistent
	unrelated.Subjects = []policyv1.Subject{policySubject("test-policy-2")}
	if _, err := Resolve(rootPolicy("inform"), nil, []policyv1.PlacementBinding{bindings[0], unrelated}, exampleDecisions); err != nil {
		t.Errorf("Resolve() error = %v for a bad binding of another policy", err)
	}

	if _, err := Resolve(nil, nil, bindings, exampleDecisions); err == nil {
		t.Error("Resolve(nil policy) returned no error")
	}
}

func TestResolutionCluster(t *testing.T) {
	res, err := Resolve(rootPolicy(inform), nil, []policyv1.PlacementBinding{
		bind("initial", rule("placementrule-initial")), enforcing(bind("sub", rule("placementrule-sub"))),
	}, exampleDecisions)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		res   *Resolution
		want  BoundCluster
		found bool
	}{
		{name: "A", res: res, want: bound("A", enforce, "sub"), found: true},
		{name: "D", res: res, want: bound("D", inform), found: true},
		{name: "E", res: res},
		{name: "", res: res},
		{name: "A", res: nil},
	}
	for _, tt := range tests {
		got, found := tt.res.Cluster(tt.name)
		if found != tt.found || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Cluster(%q) = %+v, %t; want %+v, %t", tt.name, got, found, tt.want, tt.found)
		}
	}
}
