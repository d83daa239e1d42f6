package console

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
)

// TestViewersAreBoundedAndExpire keeps at most max viewers (the least
// recently used goes first, its caches stopped) and drops a viewer unused for
// longer than idle. No API server is reached: a viewer's client discovers
// lazily and its caches are never started here.
func TestViewersAreBoundedAndExpire(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	// The console's own credentials, which a viewer's reads must never carry.
	base := &rest.Config{Host: "https://127.0.0.1:1", BearerToken: "the-consoles-own",
		TLSClientConfig: rest.TLSClientConfig{CertData: []byte("cert"), KeyData: []byte("key")}}
	v := &viewers{base: base, scheme: scheme.New(), max: 2, scopes: 2, idle: time.Minute, recheck: time.Second,
		now: func() time.Time { return now }, entries: map[string]*viewer{}}
	get := func(token string) *viewer {
		t.Helper()
		e, err := v.viewer(tokenIdentity(base, token))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a := get("a")
	stopped := false
	_, cancel := context.WithCancel(context.Background())
	a.scopes["team-a"] = &scope{cancel: func() { stopped = true; cancel() }, lastUsed: now}
	now = now.Add(time.Second)
	get("b")
	now = now.Add(time.Second)
	if get("a") != a {
		t.Fatal("the same token did not find its viewer again")
	}
	now = now.Add(time.Second)
	get("c") // b is the least recently used
	if _, kept := v.entries[tokenIdentity(base, "b").key]; kept || len(v.entries) != 2 {
		t.Fatalf("after a third viewer: %d viewers, b kept %v", len(v.entries), kept)
	}
	if stopped {
		t.Fatal("a's cache was stopped although a was used more recently than b")
	}
	now = now.Add(2 * time.Minute)
	v.sweep()
	if len(v.entries) != 0 || !stopped {
		t.Fatalf("after the idle time: %d viewers left, a's cache stopped %v", len(v.entries), stopped)
	}
	if cfg := tokenIdentity(base, "a").cfg; cfg.BearerToken != "a" || cfg.CertData != nil || cfg.KeyData != nil || cfg.Host != base.Host {
		t.Fatal("a token identity carries other credentials than the token")
	}
}
