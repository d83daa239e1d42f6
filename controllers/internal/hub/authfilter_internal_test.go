package hub

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestBearerToken: only "Bearer <token>" (any case) with a token names one.
func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc": "abc", "bearer abc ": "abc", "BEARER  abc": "abc",
		"": "", "Bearer": "", "Bearer ": "", "Basic abc": "", "abc": "",
	} {
		req, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", header)
		got, ok := bearerToken(req)
		if ok != (want != "") || got != want && ok {
			t.Errorf("%q: got %q %v, want %q", header, got, ok, want)
		}
	}
}

// TestKeptAnswersExpireAndAreBounded: an answer is kept until its time is
// up, and never more than maxKeptAnswers of them.
func TestKeptAnswersExpireAndAreBounded(t *testing.T) {
	k := &keptAnswers[bool]{}
	k.put("gone", true, -time.Second)
	if _, ok := k.get("gone"); ok {
		t.Error("an expired answer was kept")
	}
	k.put("kept", true, time.Minute)
	if v, ok := k.get("kept"); !ok || !v {
		t.Errorf("a live answer: got %v %v", v, ok)
	}
	for i := range 3 * maxKeptAnswers {
		k.put(fmt.Sprint(i), false, time.Minute)
	}
	if n := len(k.answers); n > maxKeptAnswers {
		t.Errorf("%d answers kept, at most %d", n, maxKeptAnswers)
	}
}
