package templates_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"

	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// fuzzBound checks, for one template text, that a bounded resolution returns
// within its deadline (and a little more, for the last call it waits for),
// never panics, and, when it met no bound, gives exactly what the library
// gives unbounded (then the library's run is known to be as small).
func fuzzBound(t *testing.T, config gotemplates.Config, text string, context_ any) {
	r, err := gotemplates.NewResolverWithClients(nil, nil, config)
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"v":` + strconv.Quote(text) + `}`)
	limits := templates.Limits{Timeout: 100 * time.Millisecond, Memory: 64 << 10}
	ctx, cancel := context.WithTimeout(context.Background(), limits.Timeout)
	defer cancel()
	start := time.Now()
	got, gotErr := templates.Bound(ctx, r, config, limits).ResolveTemplate(raw, context_, &gotemplates.ResolveOptions{})
	if took := time.Since(start); took > limits.Timeout+2*time.Second {
		t.Fatalf("took %s past a deadline of %s", took, limits.Timeout)
	}
	if templates.IsBoundError(gotErr) {
		return
	}
	want, wantErr := r.ResolveTemplate(raw, context_, &gotemplates.ResolveOptions{})
	if string(got.ResolvedJSON) != string(want.ResolvedJSON) || (gotErr == nil) != (wantErr == nil) ||
		(gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("bounded: %s, %v\nlibrary: %s, %v", got.ResolvedJSON, gotErr, want.ResolvedJSON, wantErr)
	}
}

var fuzzSeeds = []string{
	`{{ range until 3 }}{{ . }}{{ end }}`,
	`{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}`,
	`{{ len (until 50000000) }}`,
	`{{ $s := "x" }}{{ range until 40 }}{{ $s = printf "%s%s" $s $s }}{{ end }}{{ len $s }}`,
	`{{ $d := dict }}{{ range until 60 }}{{ $d = dict "a" $d "b" $d }}{{ end }}{{ $d }}`,
	`{{ define "t" }}{{ template "t" . }}{{ template "t" . }}{{ end }}{{ template "t" 1 }}`,
	`{{- range $i, $e := list "a" "b" -}} {{ $i }}={{ $e | upper }} {{- end }}`,
	`{{ toYaml (dict "k" (list 1 2)) }}`,
	`{{ "x\ny" | indent 4 }}`,
	`{{ repeat 100000 "abc" | len }}`,
	`{{ with .Name }}{{ . }}{{ else }}none{{ end }}`,
	`{{ "}}" }}`,
	`{{ fail "no" }}`,
}

// FuzzBoundManaged: managed-cluster templates ({{ }}).
func FuzzBoundManaged(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fuzzBound(t, gotemplates.Config{}, text, struct{ Name string }{"n"})
	})
}

// FuzzBoundHub: hub templates ({{hub hub}}), with managed ones as text.
func FuzzBoundHub(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(strings2hub(s))
	}
	f.Fuzz(func(t *testing.T, text string) {
		fuzzBound(t, templates.HubResolverConfig(), text, templates.HubContext{ManagedClusterName: "c"})
	})
}

// strings2hub spells a managed template as a hub template.
func strings2hub(s string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		switch {
		case i+1 < len(s) && s[i] == '{' && s[i+1] == '{':
			out = append(out, "{{hub"...)
			i++
		case i+1 < len(s) && s[i] == '}' && s[i+1] == '}':
			out = append(out, "hub}}"...)
			i++
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}
