package logging

import (
	"bytes"
	"strings"
	"testing"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	klogv1 "k8s.io/klog"
)

// TestWithoutTemplateTextDropsTheLibrarysTemplates: the template library's
// own log line for a failed resolution (which quotes the error, here holding
// a value the template read) does not reach the log; its other lines do.
func TestWithoutTemplateTextDropsTheLibrarysTemplates(t *testing.T) {
	var out bytes.Buffer
	WithoutTemplateText(&out)
	r, err := gotemplates.NewResolverWithClients(nil, nil, gotemplates.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ResolveTemplate([]byte(`{"a":"{{ fail \"hunter2-hunter2\" }}"}`), nil, nil); err == nil {
		t.Fatal("the template did not fail")
	}
	klogv1.Errorf("another line")
	klogv1.Flush()
	if log := out.String(); strings.Contains(log, "hunter2") || !strings.Contains(log, "another line") {
		t.Errorf("log:\n%s", log)
	}
}
