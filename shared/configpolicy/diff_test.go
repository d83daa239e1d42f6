package configpolicy

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestRecordingFor(t *testing.T) {
	cases := []struct {
		name      string
		set       policyv1.RecordDiff
		gk        schema.GroupKind
		sensitive bool
		want      DiffRecording
	}{
		{"unset: in status", "", schema.GroupKind{Group: "apps", Kind: "Deployment"}, false, DiffInStatus},
		{"unset, core ServiceAccount: in status", "", schema.GroupKind{Kind: "ServiceAccount"}, false, DiffInStatus},
		{"unset, ConfigMap: redacted", "", schema.GroupKind{Kind: "ConfigMap"}, false, DiffRedacted},
		{"unset, Secret: redacted", "", schema.GroupKind{Kind: "Secret"}, false, DiffRedacted},
		{"unset, OpenShift Route: redacted", "", schema.GroupKind{Group: "route.openshift.io", Kind: "Route"}, false, DiffRedacted},
		{"unset, OAuthAccessToken: redacted", "", schema.GroupKind{Group: "oauth.openshift.io", Kind: "OAuthAccessToken"}, false, DiffRedacted},
		{"unset, OAuthAuthorizeTokens: redacted", "", schema.GroupKind{Group: "oauth.openshift.io", Kind: "OAuthAuthorizeTokens"}, false, DiffRedacted},
		{"unset, a Secret kind of another group: in status", "", schema.GroupKind{Group: "example.com", Kind: "Secret"}, false, DiffInStatus},
		{"unset, a template that read a Secret: redacted", "", schema.GroupKind{Kind: "ServiceAccount"}, true, DiffRedacted},
		{"InStatus on a Secret: in status", policyv1.RecordDiffInStatus, schema.GroupKind{Kind: "Secret"}, true, DiffInStatus},
		{"Log", policyv1.RecordDiffLog, schema.GroupKind{Kind: "ConfigMap"}, false, DiffLog},
		{"None", policyv1.RecordDiffNone, schema.GroupKind{Kind: "Namespace"}, false, DiffNone},
	}
	for _, tc := range cases {
		if got := RecordingFor(tc.set, tc.gk, tc.sensitive); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRecordDiff(t *testing.T) {
	existing := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","generation":3,
		"managedFields":[{"manager":"kubectl"}],"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},
		"data":{"k":"old","same":"s"}}`
	updated := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","generation":4},
		"data":{"k":"new","same":"s"}}`
	const want = `--- ns/a : existing
+++ ns/a : updated
@@ -1,8 +1,8 @@
 apiVersion: v1
 data:
-  k: old
+  k: new
   same: s
 kind: ConfigMap
 metadata:
   name: a
   namespace: ns
`
	cases := []struct {
		name      string
		recording DiffRecording
		want      RecordedDiff
	}{
		{"in status", DiffInStatus, RecordedDiff{InStatus: want}},
		{"logged, not in status", DiffLog, RecordedDiff{Log: want}},
		{"none", DiffNone, RecordedDiff{}},
		{"redacted: the note only", DiffRedacted, RecordedDiff{InStatus: RedactedDiff}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, u := obj(t, existing), obj(t, updated)
			before := toJSON(t, e) + toJSON(t, u)
			got, err := RecordDiff(tc.recording, e, u)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%+v\nwant\n%+v", got, tc.want)
			}
			if toJSON(t, e)+toJSON(t, u) != before {
				t.Error("RecordDiff modified its arguments")
			}
		})
	}
}

func TestRecordDiffClusterScopedAndSame(t *testing.T) {
	ns := obj(t, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","labels":{"a":"1"}}}`)
	got, err := RecordDiff(DiffInStatus, ns, obj(t, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","labels":{"a":"2"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.InStatus, "--- n : existing\n+++ n : updated\n") {
		t.Errorf("a cluster-scoped object is named by its name alone:\n%s", got.InStatus)
	}
	if same, _ := RecordDiff(DiffInStatus, ns, ns); same != (RecordedDiff{}) {
		t.Errorf("no difference records %+v, want nothing", same)
	}
}

func TestRecordDiffTruncates(t *testing.T) {
	data := func(value string) map[string]any {
		d := map[string]any{}
		for i := range 60 {
			d[fmt.Sprintf("k%02d", i)] = value
		}
		return map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "big"}, "data": d}
	}
	got, err := RecordDiff(DiffInStatus, data("a"), data("b"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(got.InStatus, "\n")
	// The three header lines, "data:", 60 removed and 60 added lines, four
	// lines of context after them (the last an empty line difflib's
	// SplitLines adds) and the empty string after the last newline.
	if lines[0] != "# Truncated: showing 50/129 diff lines:" {
		t.Errorf("first line %q", lines[0])
	}
	if len(lines) != 1+53 || lines[1] != "--- big : existing" || lines[53] != "-  k48: a" {
		t.Errorf("%d lines, want the header and 53 diff lines:\n%s", len(lines), got.InStatus)
	}
}
