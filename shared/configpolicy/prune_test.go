package configpolicy

import (
	"reflect"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// related is a ConfigMap's related object: uid "" means no properties,
// created says createdByPolicy (nil: unset).
func related(name, uid string, created *bool) policyv1.RelatedObject {
	ro := policyv1.RelatedObject{Object: policyv1.ObjectResource{
		Kind: "ConfigMap", APIVersion: "v1", Metadata: policyv1.ObjectMetadata{Name: name, Namespace: "ns"},
	}}
	if uid != "" || created != nil {
		ro.Properties = &policyv1.ObjectProperties{UID: uid, CreatedByPolicy: created}
	}
	return ro
}

func boolPtr(b bool) *bool { return &b }

func TestCarryCreatedByPolicy(t *testing.T) {
	yes, no := boolPtr(true), boolPtr(false)
	cases := []struct {
		name       string
		old, fresh []policyv1.RelatedObject
		want       []policyv1.RelatedObject
	}{
		{"first evaluation", nil, []policyv1.RelatedObject{related("a", "u1", yes)}, []policyv1.RelatedObject{related("a", "u1", yes)}},
		{"created earlier, found now: still created by the policy",
			[]policyv1.RelatedObject{related("a", "u1", yes)}, []policyv1.RelatedObject{related("a", "u1", no)},
			[]policyv1.RelatedObject{related("a", "u1", yes)}},
		{"created earlier, recreated by someone else: keeps the policy's uid",
			[]policyv1.RelatedObject{related("a", "u1", yes)}, []policyv1.RelatedObject{related("a", "u2", no)},
			[]policyv1.RelatedObject{related("a", "u1", yes)}},
		{"recreated by the policy: the new uid",
			[]policyv1.RelatedObject{related("a", "u1", yes)}, []policyv1.RelatedObject{related("a", "u2", yes)},
			[]policyv1.RelatedObject{related("a", "u2", yes)}},
		{"found earlier, not created: nothing to carry",
			[]policyv1.RelatedObject{related("a", "u1", no)}, []policyv1.RelatedObject{related("a", "u2", no)},
			[]policyv1.RelatedObject{related("a", "u2", no)}},
		{"not found now: no properties, the memory goes",
			[]policyv1.RelatedObject{related("a", "u1", yes)}, []policyv1.RelatedObject{related("a", "", nil)},
			[]policyv1.RelatedObject{related("a", "", nil)}},
		{"another object's history is not used",
			[]policyv1.RelatedObject{related("b", "u1", yes)}, []policyv1.RelatedObject{related("a", "u2", no)},
			[]policyv1.RelatedObject{related("a", "u2", no)}},
		{"nothing evaluated", []policyv1.RelatedObject{related("a", "u1", yes)}, nil, nil},
	}
	for _, tc := range cases {
		fresh := make([]policyv1.RelatedObject, len(tc.fresh))
		for i := range tc.fresh {
			fresh[i] = *tc.fresh[i].DeepCopy()
		}
		got := CarryCreatedByPolicy(tc.old, tc.fresh)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %s, want %s", tc.name, toJSON(t, got), toJSON(t, tc.want))
		}
		if !reflect.DeepEqual(fresh, tc.fresh) && tc.fresh != nil {
			t.Errorf("%s: fresh was modified: %s", tc.name, toJSON(t, tc.fresh))
		}
	}
}

func TestPruneCandidates(t *testing.T) {
	yes, no := boolPtr(true), boolPtr(false)
	created, found, notFound := related("created", "u1", yes), related("found", "u2", no), related("missing", "", nil)
	old := []policyv1.RelatedObject{created, found, notFound}
	spec := func(action string, b policyv1.PruneObjectBehavior) policyv1.ConfigurationPolicySpec {
		return policyv1.ConfigurationPolicySpec{RemediationAction: policyv1.TemplateRemediationAction(action), PruneObjectBehavior: b}
	}
	cases := []struct {
		name     string
		spec     policyv1.ConfigurationPolicySpec
		fresh    []policyv1.RelatedObject
		deleting bool
		want     []policyv1.RelatedObject
	}{
		{"deleting, DeleteIfCreated: every object seen", spec("enforce", policyv1.PruneDeleteIfCreated), nil, true,
			[]policyv1.RelatedObject{created, found}},
		{"deleting, DeleteAll", spec("Enforce", policyv1.PruneDeleteAll), nil, true, []policyv1.RelatedObject{created, found}},
		{"deleting, None", spec("enforce", policyv1.PruneNone), nil, true, nil},
		{"deleting, unset", spec("enforce", ""), nil, true, nil},
		{"deleting, inform", spec("inform", policyv1.PruneDeleteAll), nil, true, nil},
		{"deleting, InformOnly", spec("InformOnly", policyv1.PruneDeleteAll), nil, true, nil},
		{"evaluating, nothing dropped", spec("enforce", policyv1.PruneDeleteAll), old, false, nil},
		{"evaluating, one dropped", spec("enforce", policyv1.PruneDeleteAll),
			[]policyv1.RelatedObject{related("found", "u2", no)}, false, []policyv1.RelatedObject{created}},
		{"evaluating, an object listed with other properties is not dropped", spec("enforce", policyv1.PruneDeleteAll),
			[]policyv1.RelatedObject{related("created", "u9", no), found}, false, nil},
		{"evaluating, all dropped", spec("enforce", policyv1.PruneDeleteIfCreated), nil, false, []policyv1.RelatedObject{created, found}},
		{"evaluating, inform", spec("inform", policyv1.PruneDeleteAll), nil, false, nil},
		{"evaluating, None", spec("enforce", policyv1.PruneNone), nil, false, nil},
	}
	for _, tc := range cases {
		got := PruneCandidates(tc.spec, old, tc.fresh, tc.deleting)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %s, want %s", tc.name, toJSON(t, got), toJSON(t, tc.want))
		}
	}
}

func TestDecidePrune(t *testing.T) {
	yes, no := boolPtr(true), boolPtr(false)
	created, found := related("a", "u1", yes), related("a", "u1", no)
	same := LiveObject{Found: true, UID: "u1"}
	recreated := LiveObject{Found: true, UID: "u2"}
	deleting := LiveObject{Found: true, UID: "u1", Deleting: true}
	cases := []struct {
		name string
		b    policyv1.PruneObjectBehavior
		ro   policyv1.RelatedObject
		live LiveObject
		want PruneAction
	}{
		{"DeleteIfCreated, created, same uid", policyv1.PruneDeleteIfCreated, created, same, PruneDelete},
		{"DeleteIfCreated, created, recreated by someone else", policyv1.PruneDeleteIfCreated, created, recreated, PruneKeep},
		{"DeleteIfCreated, pre-existing", policyv1.PruneDeleteIfCreated, found, same, PruneKeep},
		{"DeleteIfCreated, createdByPolicy unset", policyv1.PruneDeleteIfCreated, related("a", "u1", nil), same, PruneKeep},
		{"DeleteIfCreated, created without a uid", policyv1.PruneDeleteIfCreated, related("a", "", yes), LiveObject{Found: true}, PruneKeep},
		{"DeleteIfCreated, gone", policyv1.PruneDeleteIfCreated, created, LiveObject{}, PruneKeep},
		{"DeleteIfCreated, already being deleted", policyv1.PruneDeleteIfCreated, created, deleting, PruneAwait},
		{"DeleteAll, created", policyv1.PruneDeleteAll, created, same, PruneDelete},
		{"DeleteAll, pre-existing", policyv1.PruneDeleteAll, found, same, PruneDelete},
		{"DeleteAll, another uid", policyv1.PruneDeleteAll, found, recreated, PruneDelete},
		{"DeleteAll, gone", policyv1.PruneDeleteAll, found, LiveObject{}, PruneKeep},
		{"DeleteAll, already being deleted", policyv1.PruneDeleteAll, found, deleting, PruneAwait},
		{"None", policyv1.PruneNone, created, same, PruneKeep},
		{"unset", "", created, same, PruneKeep},
	}
	for _, tc := range cases {
		if got := DecidePrune(tc.b, tc.ro, tc.live); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCleanupMessage(t *testing.T) {
	got := CleanupMessage([]PruneFailure{
		{Object: related("a", "", nil).Object, Why: "forbidden"},
		{Object: policyv1.ObjectResource{Kind: "Namespace", Metadata: policyv1.ObjectMetadata{Name: "n"}}},
	})
	want := `Failed to delete objects: ConfigMap "a" in namespace ns (forbidden), Namespace "n"`
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCreatedWithUID(t *testing.T) {
	yes, no := true, false
	related := []policyv1.RelatedObject{
		{Properties: &policyv1.ObjectProperties{UID: "made", CreatedByPolicy: &yes}},
		{Properties: &policyv1.ObjectProperties{UID: "found", CreatedByPolicy: &no}},
		{Properties: &policyv1.ObjectProperties{UID: "unknown"}},
		{},
	}
	for uid, want := range map[string]bool{"made": true, "found": false, "unknown": false, "other": false, "": false} {
		if got := CreatedWithUID(related, uid); got != want {
			t.Errorf("uid %q: %t, want %t", uid, got, want)
		}
	}
}
