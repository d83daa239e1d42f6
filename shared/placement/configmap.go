package placement

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// IsPolicy reports whether a ConfigMap is a placement policy: it is in
// Namespace and carries LanguageLabel, whatever the label's value.
func IsPolicy(cm *corev1.ConfigMap) bool {
	_, labelled := cm.Labels[LanguageLabel]
	return cm.Namespace == Namespace && labelled
}

// Status is the outcome of loading one placement-policy ConfigMap.
type Status struct {
	ConfigMap string
	// Errors holds a PolicyError per data entry that does not compile, and one
	// for the ConfigMap's label or each binaryData entry when they are wrong;
	// none means the ConfigMap is ok.
	Errors []*PolicyError
}

// Annotation is the value of the ConfigMap's StatusAnnotation:
// {"status":"ok"}, or {"status":"error","error":"..."} with one line per
// entry at fault, "<key>: <error>" ("<field>: <error>" for the ConfigMap's
// label).
func (s Status) Annotation() string {
	value := struct {
		Status string `json:"status"`
		Error  string `json:"error,omitempty"`
	}{Status: "ok"}
	if len(s.Errors) > 0 {
		lines := make([]string, len(s.Errors))
		for i, err := range s.Errors {
			lines[i] = err.detail()
		}
		value.Status, value.Error = "error", strings.Join(lines, "\n")
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(value) // two strings always encode
	return strings.TrimSuffix(b.String(), "\n")
}
