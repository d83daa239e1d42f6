package history

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzReasonRoundTrip checks that the template named in a compliance event's
// reason is read back for any valid namespace and template name, and that
// TemplateOf and TimeOf never panic.
func FuzzReasonRoundTrip(f *testing.F) {
	f.Add("cluster1", "my-config", "p.1a2b")
	f.Add("", "cluster-scoped", "no-time")
	f.Fuzz(func(t *testing.T, namespace, template, eventName string) {
		_, _ = TemplateOf(namespace)
		_, _ = TimeOf(eventName)
		if len(validation.IsDNS1123Subdomain(template)) > 0 ||
			(namespace != "" && len(validation.IsDNS1123Label(namespace)) > 0) {
			return
		}
		if got, ok := TemplateOf(Reason(namespace, template)); !ok || got != template {
			t.Fatalf("Reason(%q, %q) reads back as %q, %v", namespace, template, got, ok)
		}
		at := time.Unix(0, int64(len(eventName))+1)
		if got, ok := TimeOf(EventName(template, at)); !ok || !got.Equal(at) {
			t.Fatalf("EventName(%q, %v) reads back as %v, %v", template, at, got, ok)
		}
	})
}
