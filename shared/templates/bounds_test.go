package templates_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"

	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// boundedAndPlain resolves raw with the library's resolver as it is and
// within limits, with the hub's delimiters.
func resolveBoth(t *testing.T, raw string, limits templates.Limits) (plain, bounded string, plainErr, boundedErr error) {
	t.Helper()
	r := fakeResolver(t)
	ctx := templates.HubContext{ManagedClusterName: "cluster-a", ManagedClusterLabels: map[string]string{"env": "prod"}}
	opts := gotemplates.ResolveOptions{LookupNamespace: "policies"}
	res, plainErr := r.ResolveTemplate([]byte(raw), ctx, &opts)
	plain = string(res.ResolvedJSON)
	deadline, cancel := context.WithTimeout(context.Background(), limits.OrDefault().Timeout)
	defer cancel()
	opts = gotemplates.ResolveOptions{LookupNamespace: "policies"}
	res, boundedErr = templates.Bound(deadline, r, templates.HubResolverConfig(), limits).ResolveTemplate([]byte(raw), ctx, &opts)
	return plain, string(res.ResolvedJSON), plainErr, boundedErr
}

// TestBoundResolvesAsTheLibrary: within its bounds, a bounded resolution
// gives what the library gives, errors included (their places told as the
// template is written).
func TestBoundResolvesAsTheLibrary(t *testing.T) {
	for _, tc := range []struct{ name, raw string }{
		{"no template", `{"a":"b"}`},
		{"context", `{"a":"{{hub .ManagedClusterName hub}}-{{hub .ManagedClusterLabels.env hub}}"}`},
		{"lookup", `{"a":"{{hub fromConfigMap \"policies\" \"sites\" .ManagedClusterName hub}}"}`},
		{"range and printf", `{"a":"{{hub range $i, $e := until 3 hub}}{{hub printf \"%d-%s;\" $i $e hub}}{{hub end hub}}"}`},
		{"trim markers", `{"a":"x {{hub- range until 2 -hub}} y {{hub- . -hub}} {{hub end hub}}"}`},
		{"empty range body", `{"a":"{{hub range until 5 hub}}{{hub end hub}}z"}`},
		{"range over an integer", `{"a":"{{hub range 3 hub}}.{{hub end hub}}"}`},
		{"missing key", `{"a":"{{hub .ManagedClusterLabels.missing hub}}"}`},
		{"toInt", `{"a":"{{hub \"6\" | toInt hub}}"}`},
		{"toBool", `{"a":"{{hub \"true\" | toBool hub}}"}`},
		{"toYAML of a dict", `{"a":"{{hub dict \"k\" \"v\" | toYAML hub}}"}`},
		{"toYAML command form", `{"a":"{{hub toYAML (list 1 2) hub}}"}`},
		{"autoindent", "{\"a\":\"{{hub \\\"x\\\\ny\\\" | autoindent hub}}\"}"},
		{"indent", `{"a":"{{hub indent 2 \"x\" hub}}"}`},
		{"define and template", `{"a":"{{hub define \"t\" hub}}T{{hub . hub}}{{hub end hub}}{{hub template \"t\" 5 hub}}"}`},
		{"if else with", `{"a":"{{hub if eq 1 1 hub}}y{{hub else hub}}n{{hub end hub}}{{hub with .ManagedClusterName hub}}{{hub . hub}}{{hub end hub}}"}`},
		{"managed template passes through", `{"a":"{{ .ObjectName }} {{hub .ManagedClusterName hub}}"}`},
		{"quoted delimiter", `{"a":"{{hub \"hub}}\" hub}}"}`},
		{"join and repeat", `{"a":"{{hub join \",\" (list \"x\" (repeat 3 \"y\")) hub}}"}`},
		{"execution error", `{"a":"{{hub range until 2 hub}}{{hub fail \"stop\" hub}}{{hub end hub}}"}`},
		{"lookup denied", `{"a":"{{hub fromConfigMap \"other\" \"sites\" \"cluster-a\" hub}}"}`},
		{"undefined function", `{"a":"{{hub nosuchfunction 1 hub}}"}`},
		{"parse error", `{"a":"{{hub range hub}}"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain, bounded, plainErr, boundedErr := resolveBoth(t, tc.raw, templates.Limits{})
			if plain != bounded {
				t.Errorf("bounded resolution gave\n%s\nthe library gives\n%s", bounded, plain)
			}
			if (plainErr == nil) != (boundedErr == nil) || (plainErr != nil && plainErr.Error() != boundedErr.Error()) {
				t.Errorf("bounded resolution failed with\n%v\nthe library with\n%v", boundedErr, plainErr)
			}
		})
	}
}

// TestBoundStops: templates that would run for minutes or take gigabytes
// are stopped at their bound, with a *BoundError naming it.
func TestBoundStops(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		limits    templates.Limits
		bound     string
	}{
		{"nested loops", `{"a":"{{hub range 100000 hub}}{{hub range 100000 hub}}{{hub end hub}}{{hub end hub}}"}`,
			templates.Limits{Timeout: 200 * time.Millisecond}, "time"},
		{"range over a large integer", `{"a":"{{hub range 10000000000 hub}}{{hub end hub}}"}`,
			templates.Limits{Timeout: 200 * time.Millisecond}, "time"},
		{"recursive template", `{"a":"{{hub define \"t\" hub}}{{hub if lt . 40 hub}}{{hub template \"t\" (add . 1) hub}}{{hub template \"t\" (add . 1) hub}}{{hub end hub}}{{hub end hub}}{{hub template \"t\" 1 hub}}"}`,
			templates.Limits{Timeout: 200 * time.Millisecond}, "time"},
		{"until", `{"a":"{{hub len (until 50000000) hub}}"}`, templates.Limits{}, "memory"},
		{"until in nested loops", `{"a":"{{hub range until 100000 hub}}{{hub range until 100000 hub}}{{hub end hub}}{{hub end hub}}"}`, templates.Limits{}, "memory"},
		{"untilStep", `{"a":"{{hub len (untilStep 0 500000000 1) hub}}"}`, templates.Limits{}, "memory"},
		{"seq", `{"a":"{{hub seq 1 100000000 | len hub}}"}`, templates.Limits{}, "memory"},
		{"repeat", `{"a":"{{hub repeat 100000000 \"x\" | len hub}}"}`, templates.Limits{}, "memory"},
		{"indent", `{"a":"{{hub indent 100000000 \"x\" | len hub}}"}`, templates.Limits{}, "memory"},
		{"replace", `{"a":"{{hub replace \"\" (repeat 1000 \"y\") (repeat 10000 \"x\") | len hub}}"}`, templates.Limits{}, "memory"},
		{"join", `{"a":"{{hub join (repeat 100000 \"s\") (until 1000) | len hub}}"}`, templates.Limits{}, "memory"},
		{"printf width", `{"a":"{{hub printf \"%999999d%999999d%999999d%999999d%999999d\" 1 2 3 4 5 | len hub}}"}`, templates.Limits{}, "memory"},
		{"doubling", `{"a":"{{hub $s := \"xx\" hub}}{{hub range until 40 hub}}{{hub $s = printf \"%s%s\" $s $s hub}}{{hub end hub}}{{hub len $s hub}}"}`,
			templates.Limits{}, "memory"},
		{"printing in a loop", `{"a":"{{hub $s := repeat 1000000 \"x\" hub}}{{hub range until 100 hub}}{{hub $s hub}}{{hub end hub}}"}`,
			templates.Limits{}, "memory"},
		{"text in a loop", `{"a":"{{hub range 1000000 hub}}0123456789{{hub end hub}}"}`, templates.Limits{Timeout: time.Minute}, "memory"},
		{"printing a shared value", `{"a":"{{hub $d := dict hub}}{{hub range until 60 hub}}{{hub $d = dict \"a\" $d \"b\" $d hub}}{{hub end hub}}{{hub $d hub}}"}`,
			templates.Limits{Timeout: time.Minute}, "memory"},
		{"serializing a shared value", `{"a":"{{hub $d := list hub}}{{hub range until 60 hub}}{{hub $d = list $d $d hub}}{{hub end hub}}{{hub toJson $d | len hub}}"}`,
			templates.Limits{Timeout: time.Minute}, "memory"},
		{"toYAML of a shared value", `{"a":"{{hub $d := list hub}}{{hub range until 60 hub}}{{hub $d = list $d $d hub}}{{hub end hub}}{{hub toYAML $d | len hub}}"}`,
			templates.Limits{Timeout: time.Minute}, "memory"},
		{"a value that holds itself", `{"a":"{{hub $d := dict hub}}{{hub $_ := set $d \"self\" $d hub}}{{hub $d hub}}"}`,
			templates.Limits{}, "depth"},
		{"sorting a shared value", `{"a":"{{hub $d := list hub}}{{hub range until 60 hub}}{{hub $d = list $d $d hub}}{{hub end hub}}{{hub sortAlpha (list $d) | len hub}}"}`,
			templates.Limits{Timeout: time.Minute}, "memory"},
		{"a shared value as a dict key", `{"a":"{{hub $d := list hub}}{{hub range until 60 hub}}{{hub $d = list $d $d hub}}{{hub end hub}}{{hub dict $d 1 | len hub}}"}`,
			templates.Limits{Timeout: time.Minute}, "memory"},
		{"deep nesting", `{"a":"{{hub $d := dict hub}}{{hub range until 5000 hub}}{{hub $d = dict \"a\" $d hub}}{{hub end hub}}{{hub print $d | len hub}}"}`,
			templates.Limits{}, "depth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fakeResolver(t)
			limits := tc.limits.OrDefault()
			ctx, cancel := context.WithTimeout(context.Background(), limits.Timeout)
			defer cancel()
			res, err := templates.Bound(ctx, r, templates.HubResolverConfig(), limits).
				ResolveTemplate([]byte(tc.raw), templates.HubContext{}, &gotemplates.ResolveOptions{})
			var be *templates.BoundError
			if !errors.As(err, &be) {
				t.Fatalf("got %q, %v; want a %s BoundError", res.ResolvedJSON, err, tc.bound)
			}
			if be.Bound != tc.bound {
				t.Errorf("stopped at the %s bound (%v), want %s", be.Bound, err, tc.bound)
			}
			if len(res.ResolvedJSON) != 0 {
				t.Errorf("a stopped resolution returned %d bytes", len(res.ResolvedJSON))
			}
		})
	}
}

// TestBoundErrorNamesTheSetting: the message says which bound and where it
// is set.
func TestBoundErrorNamesTheSetting(t *testing.T) {
	limits := templates.Limits{Memory: 1 << 20, MemorySetting: "--hub-template-memory"}
	_, _, _, err := resolveBoth(t, `{"a":"{{hub len (until 50000000) hub}}"}`, limits)
	if err == nil || !strings.Contains(err.Error(), "memory bound of 1Mi") || !strings.Contains(err.Error(), "--hub-template-memory") ||
		!strings.Contains(err.Error(), "until") {
		t.Errorf("got %v", err)
	}
}

// TestBoundCancelled: a resolution whose context is cancelled stops.
func TestBoundCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := templates.Bound(ctx, fakeResolver(t), templates.HubResolverConfig(), templates.Limits{}).
		ResolveTemplate([]byte(`{"a":"{{hub 1 hub}}"}`), templates.HubContext{}, &gotemplates.ResolveOptions{})
	if !templates.IsBoundError(err) {
		t.Errorf("got %v", err)
	}
}

// TestBoundHidesMessagesAfterASecretRead: a resolution that fails after it
// read a Secret does not tell the library's message, which may quote the
// value (fail, a conversion error).
func TestBoundHidesMessagesAfterASecretRead(t *testing.T) {
	for _, raw := range []string{
		`{"a":"{{hub fail (fromSecret \"policies\" \"creds\" \"password\" | b64dec) hub}}"}`,
		`{"a":"{{hub fromSecret \"policies\" \"creds\" \"password\" | b64dec | toInt | toBool hub}}{{hub fail \"x\" hub}}"}`,
	} {
		_, _, plainErr, err := resolveBoth(t, raw, templates.Limits{})
		if plainErr == nil || !strings.Contains(plainErr.Error(), "s3cret") && !strings.Contains(raw, "fail \\\"x") {
			t.Fatalf("the library's own message does not hold the secret, the case tests nothing: %v", plainErr)
		}
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "read a Secret") {
			t.Errorf("got %v", err)
		}
	}
}

// TestBackoffs: the wait grows while evaluations keep meeting bounds, per
// policy, and starts over after one that meets none.
func TestBackoffs(t *testing.T) {
	var b templates.Backoffs
	var got []time.Duration
	for _, stopped := range []bool{true, true, true, false, true} {
		got = append(got, b.Next("a", stopped))
	}
	want := []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 0, 15 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
	if b.Next("b", true) != 15*time.Second {
		t.Error("another policy shares a's count")
	}
	for range 20 {
		b.Next("c", true)
	}
	if d := b.Next("c", true); d != 10*time.Minute {
		t.Errorf("at most 10 minutes, got %s", d)
	}
}

// BenchmarkBound resolves a policy template in the style of the policy
// collection's hub templates, plainly and within bounds: the cost of the
// bounds is the ratio of the two.
func BenchmarkBound(b *testing.B) {
	raw := []byte(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"p"},` +
		`"spec":{"object-templates":[{"complianceType":"musthave","objectDefinition":{"apiVersion":"v1","kind":"ConfigMap",` +
		`"metadata":{"name":"site","namespace":"default"},"data":{"cluster":"{{hub .ManagedClusterName hub}}",` +
		`"env":"{{hub index .ManagedClusterLabels \"env\" | default \"dev\" | upper hub}}",` +
		`"list":"{{hub range $i, $e := until 10 hub}}{{hub printf \"%d-%s;\" $i $.ManagedClusterName hub}}{{hub end hub}}"}}}]}}`)
	ctx := templates.HubContext{ManagedClusterName: "cluster-a", ManagedClusterLabels: map[string]string{"env": "prod"}}
	r, err := gotemplates.NewResolverWithClients(nil, nil, templates.HubResolverConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.ResolveTemplate(raw, ctx, &gotemplates.ResolveOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bounded", func(b *testing.B) {
		for b.Loop() {
			deadline, cancel := context.WithTimeout(context.Background(), time.Second)
			if _, err := templates.Bound(deadline, r, templates.HubResolverConfig(), templates.Limits{}).
				ResolveTemplate(raw, ctx, &gotemplates.ResolveOptions{}); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
	})
}
