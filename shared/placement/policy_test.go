package placement

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

func TestParseClusters(t *testing.T) {
	cases := []struct {
		value string
		want  []string
	}{
		{"", nil},
		{" , ,", nil},
		{"b,a", []string{"a", "b"}},
		{" a , b,a,, c", []string{"a", "b", "c"}},
	}
	for _, tc := range cases {
		got := ParseClusters(tc.value)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseClusters(%q) = %q, want %q", tc.value, got, tc.want)
		}
		if back := ParseClusters(FormatClusters(got)); !reflect.DeepEqual(back, got) {
			t.Errorf("FormatClusters(%q) does not parse back: %q", got, back)
		}
	}
}

func TestClusterOf(t *testing.T) {
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Labels: map[string]string{"jurisdiction": "eu"}},
		Status: clusterv1.ManagedClusterStatus{ClusterClaims: []clusterv1.ManagedClusterClaim{
			{Name: "pci-compliance-level", Value: "1"}, {Name: "platform", Value: "AWS"}, {Name: "pci-compliance-level", Value: "2"},
		}},
	}
	want := Cluster{Name: "eu-1", Labels: map[string]string{"jurisdiction": "eu"},
		Claims: map[string]string{"pci-compliance-level": "2", "platform": "AWS"}}
	if got := ClusterOf(mc); !reflect.DeepEqual(got, want) {
		t.Errorf("ClusterOf = %+v, want %+v", got, want)
	}
	empty := ClusterOf(&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "bare"}})
	if empty.Labels == nil || empty.Claims == nil {
		t.Error("a cluster without labels or claims must have empty maps, as data.clusters holds them")
	}
}

func TestParseCELPolicy(t *testing.T) {
	cases := []struct {
		name, doc, wantErr string
	}{
		{name: "the example's shape", doc: "when: 'true'\nvariables:\n- name: x\n  expression: '1'\nmatch:\n- expression: 'true'\n  message: m\nerrors:\n- expression: 'false'\n  messageExpression: '\"m\"'\nannotations:\n  a.io/b: '\"v\"'\n"},
		{name: "JSON", doc: `{"errors": [{"expression": "false"}]}`},
		{name: "nothing to decide", doc: "when: 'true'\n", wantErr: "the policy has no match, errors or annotations"},
		{name: "an unknown field", doc: "errors: []\nmatches: []\n", wantErr: `unknown field "matches"`},
		{name: "a variable that is no identifier", doc: "variables:\n- name: a-b\n  expression: '1'\nerrors:\n- expression: 'true'\n", wantErr: `variables[0].name: "a-b" is not an identifier`},
		{name: "a variable defined twice", doc: "variables:\n- name: a\n  expression: '1'\n- name: a\n  expression: '2'\nerrors:\n- expression: 'true'\n", wantErr: `variables[1].name: "a" is defined twice`},
		{name: "a variable without expression", doc: "variables:\n- name: a\nerrors:\n- expression: 'true'\n", wantErr: "variables[0].expression: required"},
		{name: "a condition without expression", doc: "match:\n- message: m\n", wantErr: "match[0].expression: required"},
		{name: "both messages", doc: "errors:\n- expression: 'true'\n  message: m\n  messageExpression: '\"m\"'\n", wantErr: "errors[0]: give message or messageExpression, not both"},
		{name: "an annotation name that is not one", doc: "annotations:\n  'a b': '\"v\"'\n", wantErr: `annotations["a b"]: not an annotation name`},
		{name: "an annotation without expression", doc: "annotations:\n  a: ''\n", wantErr: `annotations["a"]: the expression is required`},
		{name: "the clusters annotation next to match", doc: "match:\n- expression: 'true'\nannotations:\n  placement.fleetpolicy.io/clusters: '\"a\"'\n",
			wantErr: `annotations["placement.fleetpolicy.io/clusters"]: match already sets it`},
		{name: "the clusters annotation without match", doc: "annotations:\n  placement.fleetpolicy.io/clusters: '\"a\"'\n"},
		{name: "not a mapping", doc: "- a\n", wantErr: "not a CEL placement policy document"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCELPolicy(tc.doc)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}
