package hub

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestStatusWrites: after an accepted status write, a reconcile that finds
// the root as the write replaced it waits (behind), until the cache shows
// another version, the root is another object of the name, the wait times
// out, or the root is forgotten; a root with no write of its own never waits.
func TestStatusWrites(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "p"}
	root := func(uid types.UID, resourceVersion string) *policyv1.Policy {
		return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: uid, ResourceVersion: resourceVersion}}
	}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		cached *policyv1.Policy
		now    time.Time
		behind bool
	}{
		{"the version the write replaced", root("u1", "10"), at.Add(time.Second), true},
		{"the cache brought the write back", root("u1", "11"), at.Add(time.Second), false},
		{"root recreated under the name", root("u2", "10"), at.Add(time.Second), false},
		{"the write's event never came", root("u1", "10"), at.Add(ownWriteTimeout), false},
	} {
		s := newStatusWrites()
		if behind, _ := s.behind(root("u1", "10"), at); behind {
			t.Fatalf("%s: behind before any write", tc.name)
		}
		s.wrote(root("u1", "10"), at)
		got, age := s.behind(tc.cached, tc.now)
		if got != tc.behind || (got && age != tc.now.Sub(at)) {
			t.Errorf("%s: behind %v for %s, want %v for %s", tc.name, got, age, tc.behind, tc.now.Sub(at))
		}
		if behind, _ := s.behind(root("u1", "10"), at.Add(time.Second)); !tc.behind && behind {
			t.Errorf("%s: the write was not forgotten once the cache moved on", tc.name)
		}
	}

	s := newStatusWrites()
	s.wrote(root("u1", "10"), at)
	s.forget(key)
	if behind, _ := s.behind(root("u1", "10"), at.Add(time.Second)); behind {
		t.Fatal("a forgotten root still waits")
	}
	for age, want := range map[time.Duration]time.Duration{
		0: 20 * time.Millisecond, 40 * time.Millisecond: 20 * time.Millisecond,
		time.Second: 250 * time.Millisecond, time.Minute: time.Second,
	} {
		if got := cacheCatchUp(age); got != want {
			t.Errorf("cacheCatchUp(%s) = %s, want %s", age, got, want)
		}
	}
}
