package configpolicy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestObjectSelector(t *testing.T) {
	team := labels.Set{"team": "a"}
	other := labels.Set{"team": "b", "tier": "web"}
	none := labels.Set{}
	cases := []struct {
		name    string
		sel     *metav1.LabelSelector
		objName string
		applies bool
		matches []labels.Set // the label sets the selector selects
		misses  []labels.Set // and those it does not
		wantErr string
	}{
		{name: "unset: the template is not selected", sel: nil},
		{name: "a name wins over the selector", sel: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, objName: "x"},
		{name: "{} selects every object", sel: &metav1.LabelSelector{}, applies: true, matches: []labels.Set{team, other, none}},
		{name: "empty matchLabels selects every object", sel: &metav1.LabelSelector{MatchLabels: map[string]string{}}, applies: true,
			matches: []labels.Set{team, none}},
		{name: "empty matchExpressions selects every object", sel: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{}},
			applies: true, matches: []labels.Set{other, none}},
		{name: "matchLabels", sel: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, applies: true,
			matches: []labels.Set{team}, misses: []labels.Set{other, none}},
		{name: "matchLabels and matchExpressions are ANDed", sel: &metav1.LabelSelector{
			MatchLabels:      map[string]string{"team": "b"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}},
		}, applies: true, matches: []labels.Set{other}, misses: []labels.Set{team, {"team": "b"}}},
		{name: "DoesNotExist", sel: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpDoesNotExist}}},
			applies: true, matches: []labels.Set{team, none}, misses: []labels.Set{other}},
		{name: "an unknown operator, as OCM words it", sel: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "name", Operator: "Seriously"}}},
			wantErr: `Error parsing provided objectSelector in the object-template at index [2]: "Seriously" is not a valid label selector operator`},
		{name: "In without values, as OCM words it", sel: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "name", Operator: metav1.LabelSelectorOpIn, Values: []string{}}}},
			wantErr: "Error parsing provided objectSelector in the object-template at index [2]: values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"},
	}
	for _, tc := range cases {
		sel, applies, err := ObjectSelector(tc.sel, tc.objName, 2)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr || applies {
				t.Errorf("%s: got %v, %v, want error %q", tc.name, applies, err, tc.wantErr)
			}
			continue
		}
		if err != nil || applies != tc.applies {
			t.Errorf("%s: got applies %v, error %v, want applies %v", tc.name, applies, err, tc.applies)
			continue
		}
		for _, set := range tc.matches {
			if !sel.Matches(set) {
				t.Errorf("%s: does not select %v", tc.name, set)
			}
		}
		for _, set := range tc.misses {
			if sel.Matches(set) {
				t.Errorf("%s: selects %v", tc.name, set)
			}
		}
	}
}

func TestSelectedName(t *testing.T) {
	if got, err := SelectedName("", "picked"); got != "picked" || err != nil {
		t.Errorf("no name: got %q, %v", got, err)
	}
	if got, err := SelectedName("picked", "picked"); got != "picked" || err != nil {
		t.Errorf("the same name: got %q, %v", got, err)
	}
	if _, err := SelectedName("other", "picked"); err == nil ||
		err.Error() != "The object definition's name must match the result from the object selector after template resolution" {
		t.Errorf("another name: got %v", err)
	}
}

func TestJudgeSelection(t *testing.T) {
	// Each selected object's desired object is the template's with its name.
	cm := func(t *testing.T, ns, name, data string) Selected {
		return Selected{Namespace: ns, Name: name,
			Live: obj(t, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "`+name+`", "namespace": "`+ns+`"}, "data": `+data+`}`)}
	}
	withDesired := func(t *testing.T, desired string, selected ...Selected) []Selected {
		for i := range selected {
			selected[i].Desired = obj(t, desired)
		}
		return selected
	}
	const wantK = `{"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}`
	type verdict struct {
		object int
		Verdict
		merged string // JSON of Merged, "" for none
	}
	cases := []struct {
		name       string
		namespaces []string
		selected   func(t *testing.T) []Selected
		ct         policyv1.ComplianceType
		enforce    bool
		want       []verdict
		message    string // Describe of Summary, or of the verdicts' results
		nothing    bool
	}{
		{name: "nothing selected", namespaces: []string{"a", "b"}, ct: policyv1.MustHave,
			selected: func(*testing.T) []Selected { return nil }, nothing: true},
		{name: "musthave, inform: each selected object checked", namespaces: []string{"a", "b"}, ct: policyv1.MustHave,
			selected: func(t *testing.T) []Selected {
				return withDesired(t, wantK, cm(t, "a", "one", `{"k": "v", "x": "y"}`), cm(t, "a", "two", `{"k": "w"}`), cm(t, "b", "one", `{}`))
			},
			want: []verdict{
				{0, Verdict{Compliant: true, Reason: ReasonFoundAsSpecified}, ""},
				{1, Verdict{Reason: ReasonNotAsSpecified}, ""},
				{2, Verdict{Reason: ReasonNotAsSpecified}, ""},
			},
			message: "configmaps [two] found but not as specified in namespace a; configmaps [one] found but not as specified in namespace b"},
		{name: "musthave, enforce: those that differ are updated, none created", namespaces: []string{"a"}, ct: policyv1.MustHave, enforce: true,
			selected: func(t *testing.T) []Selected {
				return withDesired(t, wantK, cm(t, "a", "one", `{"k": "v"}`), cm(t, "a", "two", `{"x": "y"}`))
			},
			want: []verdict{
				{0, Verdict{Compliant: true, Reason: ReasonFoundAsSpecified}, ""},
				{1, Verdict{Compliant: true, Action: ActionUpdate, Reason: ReasonUpdated},
					`{"apiVersion":"v1","data":{"k":"v","x":"y"},"kind":"ConfigMap","metadata":{"name":"two","namespace":"a"}}`},
			},
			message: "configmaps [one] found as specified in namespace a; configmaps [two] was updated successfully in namespace a"},
		{name: "mustonlyhave, enforce: the extra key goes", namespaces: []string{"a"}, ct: policyv1.MustOnlyHave, enforce: true,
			selected: func(t *testing.T) []Selected { return withDesired(t, wantK, cm(t, "a", "one", `{"k": "v", "x": "y"}`)) },
			want: []verdict{{0, Verdict{Compliant: true, Action: ActionUpdate, Reason: ReasonUpdated},
				`{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap","metadata":{"name":"one","namespace":"a"}}`}},
			message: "configmaps [one] was updated successfully in namespace a"},
		{name: "mustnothave, inform: only the matching objects are violations", namespaces: []string{"a", "b"}, ct: policyv1.MustNotHave,
			selected: func(t *testing.T) []Selected {
				return withDesired(t, wantK, cm(t, "a", "match-1", `{"k": "v"}`), cm(t, "a", "other", `{"k": "w"}`), cm(t, "b", "match-2", `{"k": "v", "x": "y"}`))
			},
			want:    []verdict{{0, Verdict{Reason: ReasonFoundButShouldNot}, ""}, {2, Verdict{Reason: ReasonFoundButShouldNot}, ""}},
			message: "configmaps [match-1] found in namespace a; configmaps [match-2] found in namespace b"},
		{name: "mustnothave, enforce: only the matching objects are deleted", namespaces: []string{"a"}, ct: policyv1.MustNotHave, enforce: true,
			selected: func(t *testing.T) []Selected {
				return withDesired(t, wantK, cm(t, "a", "other", `{}`), cm(t, "a", "match", `{"k": "v"}`))
			},
			want:    []verdict{{1, Verdict{Compliant: true, Action: ActionDelete, Reason: ReasonDeleted}, ""}},
			message: "configmaps [match] was deleted successfully in namespace a"},
		{name: "mustnothave, none matching: compliant over every namespace, every selected object related", namespaces: []string{"a", "b", "c"},
			ct: policyv1.MustNotHave, enforce: true,
			selected: func(t *testing.T) []Selected {
				return withDesired(t, wantK, cm(t, "a", "one", `{"k": "w"}`), cm(t, "b", "two", `{}`))
			},
			want:    []verdict{{0, Verdict{Compliant: true}, ""}, {1, Verdict{Compliant: true}, ""}},
			message: "configmaps missing as expected in namespaces: a, b, c"},
		{name: "mustnothave, none matching, cluster-scoped", namespaces: []string{""}, ct: policyv1.MustNotHave,
			selected: func(t *testing.T) []Selected {
				return withDesired(t, `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"labels": {"x": "y"}}}`,
					Selected{Name: "ns", Live: obj(t, `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": {"x": "z"}}}`)})
			},
			want:    []verdict{{0, Verdict{Compliant: true}, ""}},
			message: "namespaces missing as expected"},
	}
	for _, tc := range cases {
		selected := tc.selected(t)
		resource := "configmaps"
		if tc.namespaces[0] == "" {
			resource = "namespaces"
		}
		got := JudgeSelection(resource, tc.namespaces, selected, tc.ct, tc.ct, tc.enforce)
		if got.NothingSelected != tc.nothing {
			t.Errorf("%s: NothingSelected %v", tc.name, got.NothingSelected)
		}
		if len(got.Verdicts) != len(tc.want) {
			t.Errorf("%s: got %d verdicts %+v, want %d", tc.name, len(got.Verdicts), got.Verdicts, len(tc.want))
			continue
		}
		results := got.Summary
		for i, w := range tc.want {
			g := got.Verdicts[i]
			merged := ""
			if g.Merged != nil {
				merged = toJSON(t, g.Merged)
			}
			if g.Object != w.object || g.Verdict != w.Verdict || merged != w.merged {
				t.Errorf("%s: verdict %d: got %d %+v %s, want %d %+v %s", tc.name, i, g.Object, g.Verdict, merged, w.object, w.Verdict, w.merged)
			}
			if got.Summary == nil {
				s := selected[g.Object]
				results = append(results, Result{Resource: resource, Namespace: s.Namespace, Name: s.Name, Compliant: g.Compliant, Reason: g.Reason})
			}
		}
		if msg := Describe(results); msg != tc.message {
			t.Errorf("%s: message\n got %s\nwant %s", tc.name, msg, tc.message)
		}
	}
}
