package hub

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestExplainConcurrencyBound: with every slot taken, /explain answers 429
// with Retry-After and evaluates nothing; a freed slot admits the next request,
// which gives its slot back when it is done.
func TestExplainConcurrencyBound(t *testing.T) {
	h := &explainHandler{engine: newPlacementEngine(), timeout: time.Second, slots: make(chan struct{}, 2)}
	serve := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, ExplainPath, strings.NewReader("kind: Policy")))
		return rec
	}
	h.slots <- struct{}{}
	h.slots <- struct{}{}
	if rec := serve(); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("with every slot taken: %d %q, Retry-After %q", rec.Code, rec.Body.String(), rec.Header().Get("Retry-After"))
	}
	<-h.slots
	// The engine has not loaded, so the admitted request ends in 503: past the bound.
	if rec := serve(); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("with a free slot: %d %q", rec.Code, rec.Body.String())
	}
	if len(h.slots) != 1 {
		t.Fatalf("%d slots taken after the request, want 1 (its slot given back)", len(h.slots))
	}
}
