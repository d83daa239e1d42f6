package logging

import (
	"bytes"
	"flag"
	"io"
	"sync"

	klogv1 "k8s.io/klog"
)

// templateText is in the log lines in which the template library
// (go-template-utils) quotes a whole template and its error: on a managed
// cluster the template as resolved holds the values it decrypted, and an
// error (fail, a conversion) may quote a Secret's value. The controllers
// report these errors in status, without the values.
var templateText = [][]byte{[]byte("error resolving the template"), []byte("error parsing template string")}

// WithoutTemplateText sends the log of klog v1, through which the template
// library logs, to w, without the library's lines that quote templates.
func WithoutTemplateText(w io.Writer) {
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klogv1.InitFlags(flags)
	_ = flags.Set("logtostderr", "false")
	_ = flags.Set("alsologtostderr", "false")
	_ = flags.Set("stderrthreshold", "FATAL")
	klogv1.SetOutput(&templateTextFilter{w: w})
}

// templateTextFilter writes what klog v1 writes (one entry a Write) but the
// entries that quote templates.
type templateTextFilter struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *templateTextFilter) Write(p []byte) (int, error) {
	for _, t := range templateText {
		if bytes.Contains(p, t) {
			return len(p), nil
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w.Write(p)
}
