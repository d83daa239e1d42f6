package configpolicy

import (
	"strings"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestCustomComplianceMessage(t *testing.T) {
	policy := map[string]any{
		"metadata": map[string]any{"name": "cm-policy"},
		"status": map[string]any{"relatedObjects": []any{
			map[string]any{"object": map[string]any{"metadata": map[string]any{"name": "a"}}},
			map[string]any{"object": map[string]any{"metadata": map[string]any{"name": "b"}}},
		}},
	}
	const def = "NonCompliant; violation - configmaps [a] not found in namespace default"
	custom := policyv1.CustomMessage{
		Compliant:    "all {{ len .Policy.status.relatedObjects }} objects are in place",
		NonCompliant: "NonCompliant; {{ .Policy.metadata.name | upper }}: {{ .DefaultMessage | trimPrefix \"NonCompliant; \" }}",
	}
	cases := []struct {
		name      string
		custom    policyv1.CustomMessage
		compliant bool
		want      string
	}{
		{"compliant template, prefix added", custom, true, "Compliant; all 2 objects are in place"},
		{"noncompliant template keeps its prefix", custom, false, "NonCompliant; CM-POLICY: violation - configmaps [a] not found in namespace default"},
		{"no template for the state", policyv1.CustomMessage{Compliant: "x"}, false, def},
		{"no templates", policyv1.CustomMessage{}, true, def},
		{"a template that cannot parse", policyv1.CustomMessage{NonCompliant: "{{ .Policy"}, false, def + " (failure processing the custom message: "},
		{"a template that fails", policyv1.CustomMessage{NonCompliant: "{{ fail \"no\" }}"}, false, def + " (failure processing the custom message: "},
		{"the environment is not readable", policyv1.CustomMessage{NonCompliant: "{{ env \"HOME\" }}"}, false, def + " (failure processing the custom message: "},
	}
	for _, c := range cases {
		got := CustomComplianceMessage(c.custom, c.compliant, def, policy)
		if strings.HasSuffix(c.want, ": ") {
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("%s: %q, want it to start with %q", c.name, got, c.want)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestWithWholeRelatedObjects(t *testing.T) {
	policy := map[string]any{"status": map[string]any{"relatedObjects": []any{
		map[string]any{"object": map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}},
		map[string]any{"object": map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "gone"}}},
	}}}
	whole := map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "v"}}
	// A nil entry (not readable) keeps the identifying fields; extra entries are ignored.
	WithWholeRelatedObjects(policy, []map[string]any{whole, nil, {"kind": "extra"}})
	msg := CustomComplianceMessage(policyv1.CustomMessage{Compliant: `{{ range .Policy.status.relatedObjects }}{{ .object.metadata.name }}={{ .object.data.k }} {{ end }}`},
		true, "default", policy)
	if msg != "Compliant; a=v gone=<no value> " {
		t.Errorf("got %q", msg)
	}
	// A policy without status is left alone.
	WithWholeRelatedObjects(map[string]any{}, []map[string]any{whole})
}
