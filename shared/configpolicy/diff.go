package configpolicy

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// DiffRecording is where the difference of one object template's objects is
// recorded: spec.object-templates[].recordDiff once its default is applied.
type DiffRecording string

const (
	// DiffInStatus records the diff in status.relatedObjects[].properties.diff.
	DiffInStatus = DiffRecording(policyv1.RecordDiffInStatus)
	// DiffLog logs it.
	DiffLog = DiffRecording(policyv1.RecordDiffLog)
	// DiffNone records nothing.
	DiffNone = DiffRecording(policyv1.RecordDiffNone)
	// DiffRedacted records RedactedDiff in the status instead of the diff:
	// recordDiff is unset and the object may hold sensitive data.
	DiffRedacted DiffRecording = "Redacted"
)

// RedactedDiff stands in the status for the diff of an object that may hold
// sensitive data, when recordDiff is unset (OCM's wording).
const RedactedDiff = `# The difference is redacted because it contains sensitive data. To override, the ` +
	`spec["object-templates"][].recordDiff field must be set to "InStatus" for the difference to be recorded ` +
	`in the policy status. Consider existing access to the ConfigurationPolicy objects and the etcd ` +
	`encryption configuration before you proceed with an override.`

// maxDiffLines is how many lines of a diff are kept, after its three header
// lines, as in OCM.
const maxDiffLines = 50

// sensitiveKinds are the kinds whose diff is redacted unless recordDiff says
// otherwise, by group (OCM's list).
var sensitiveKinds = map[string][]string{
	"":                   {"ConfigMap", "Secret"},
	"oauth.openshift.io": {"OAuthAccessToken", "OAuthAuthorizeTokens"},
	"route.openshift.io": {"Route"},
}

// RecordingFor is where the diff of an object template's object goes: set
// (its recordDiff) when set; otherwise DiffRedacted for a kind that may hold
// sensitive data or when the template's resolution read sensitive data
// (sensitiveTemplate: a Secret, a decrypted value), else DiffInStatus.
func RecordingFor(set policyv1.RecordDiff, gk schema.GroupKind, sensitiveTemplate bool) DiffRecording {
	if set != "" {
		return DiffRecording(set)
	}
	for _, kind := range sensitiveKinds[gk.Group] {
		if kind == gk.Kind {
			return DiffRedacted
		}
	}
	if sensitiveTemplate {
		return DiffRedacted
	}
	return DiffInStatus
}

// RecordedDiff is what is recorded of the difference of one object.
type RecordedDiff struct {
	// InStatus goes to the related object's properties.diff ("" for none).
	InStatus string
	// Log is to be logged by the controller ("" for nothing).
	Log string
}

// RecordDiff renders the difference between existing (the object on the
// cluster) and updated (the object as the policy would have it) and says
// where it goes for recording r. The diff is a unified diff of the two
// objects as YAML, five lines of context, from "<namespace>/<name> :
// existing" to "<namespace>/<name> : updated" (OCM's format), without
// managedFields, metadata.generation and kubectl's last-applied annotation;
// past 50 lines it is cut and headed "# Truncated: showing 50/<lines> diff
// lines:". Nothing is rendered for DiffNone or DiffRedacted. Neither object is
// modified; an object that cannot be rendered as YAML is an error.
func RecordDiff(r DiffRecording, existing, updated map[string]any) (RecordedDiff, error) {
	switch r {
	case DiffRedacted:
		return RecordedDiff{InStatus: RedactedDiff}, nil
	case DiffInStatus, DiffLog:
	default:
		return RecordedDiff{}, nil
	}
	diff, err := unifiedDiff(existing, updated)
	if err != nil {
		return RecordedDiff{}, err
	}
	if r == DiffLog {
		return RecordedDiff{Log: diff}, nil
	}
	return RecordedDiff{InStatus: diff}, nil
}

func unifiedDiff(existing, updated map[string]any) (string, error) {
	from, err := yaml.Marshal(withoutNoise(existing))
	if err != nil {
		return "", fmt.Errorf("the existing object cannot be rendered as YAML: %w", err)
	}
	to, err := yaml.Marshal(withoutNoise(updated))
	if err != nil {
		return "", fmt.Errorf("the updated object cannot be rendered as YAML: %w", err)
	}
	obj := unstructured.Unstructured{Object: existing}
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(from)), FromFile: name + " : existing",
		B: difflib.SplitLines(string(to)), ToFile: name + " : updated",
		Context: 5,
	})
	if err != nil {
		return "", err
	}
	lines := strings.Split(diff, "\n")
	if keep := maxDiffLines + 3; len(lines) > keep {
		diff = fmt.Sprintf("# Truncated: showing %d/%d diff lines:\n%s", maxDiffLines, len(lines), strings.Join(lines[:keep], "\n"))
	}
	return diff, nil
}

// withoutNoise is a copy of obj without the fields that change on their own
// and say nothing of the difference.
func withoutNoise(obj map[string]any) map[string]any {
	out := deepCopyMap(obj)
	if out == nil {
		return map[string]any{}
	}
	unstructured.RemoveNestedField(out, "metadata", "managedFields")
	unstructured.RemoveNestedField(out, "metadata", "generation")
	unstructured.RemoveNestedField(out, "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")
	if meta, ok := out["metadata"].(map[string]any); ok {
		if annotations, ok := meta["annotations"].(map[string]any); meta["annotations"] == nil || ok && len(annotations) == 0 {
			delete(meta, "annotations")
		}
	}
	return out
}
