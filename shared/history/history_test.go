package history

import (
	"fmt"
	"testing"
	"time"
)

func TestTemplateOf(t *testing.T) {
	cases := []struct {
		reason string
		want   string
		ok     bool
	}{
		{"policy: cluster1/my-config", "my-config", true},
		{"Policy:   cluster1 / my-config", "my-config", true},
		{"policy: cluster-scoped-template", "cluster-scoped-template", true},
		{"POLICY: ns.with.dots/t", "t", true},
		{"policy: ", "", false},
		{"PolicyTemplateSync", "", false},
		{"Created", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, ok := TemplateOf(tc.reason)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: got %q, %v; want %q, %v", tc.reason, got, ok, tc.want, tc.ok)
		}
	}
	if got, _ := TemplateOf(Reason("cluster1", "cp")); got != "cp" {
		t.Errorf("Reason does not round-trip: %q", got)
	}
	if got, _ := TemplateOf(Reason("", "cp")); got != "cp" {
		t.Errorf("Reason of a cluster-scoped template does not round-trip: %q", got)
	}
}

func TestEventNameRoundTrip(t *testing.T) {
	at := time.Unix(1700000000, 123456789)
	name := EventName("default.my-policy", at)
	if name != "default.my-policy."+fmt.Sprintf("%x", at.UnixNano()) {
		t.Fatalf("name %s", name)
	}
	got, ok := TimeOf(name)
	if !ok || !got.Equal(at) {
		t.Errorf("TimeOf(%s) = %v, %v; want %v", name, got, ok, at)
	}
	for _, bad := range []string{"no-dot", "policy.zz", "policy.", "policy.-5"} {
		if _, ok := TimeOf(bad); ok {
			t.Errorf("TimeOf(%q) is ok", bad)
		}
	}
}

func TestPerTemplate(t *testing.T) {
	base := time.Unix(1700000000, 0)
	ev := func(template string, nanos int64, msg string) Event {
		at := base.Add(time.Duration(nanos))
		return Event{Name: EventName("ns.p", at), Reason: Reason("cluster1", template), Message: msg, Time: at.Truncate(time.Second)}
	}
	events := []Event{
		ev("a", 1, "NonCompliant; first"),
		ev("a", 3, "Compliant; third"),
		ev("a", 2, "Pending; second"),
		ev("b", 5, "Compliant; b"),
		{Name: "unrelated", Reason: "Scheduled", Message: "ignored"},
		// Same second, ordered by the nanoseconds in the names.
	}
	events = append(events, events[0]) // a duplicate is kept once
	got := PerTemplate(events)
	if len(got) != 2 {
		t.Fatalf("templates %v", got)
	}
	var msgs []string
	for _, e := range got["a"] {
		msgs = append(msgs, e.Message)
		if !e.LastTimestamp.Time.Equal(base) {
			t.Errorf("timestamp %v not truncated to the second", e.LastTimestamp)
		}
	}
	if fmt.Sprint(msgs) != "[Compliant; third Pending; second NonCompliant; first]" {
		t.Errorf("history of a: %v", msgs)
	}
	if len(got["b"]) != 1 || got["b"][0].EventName != EventName("ns.p", base.Add(5)) {
		t.Errorf("history of b: %+v", got["b"])
	}

	// An event without a time in its name is ordered by its timestamp.
	legacy := Event{Name: "legacy-event", Reason: Reason("cluster1", "a"), Message: "newest", Time: base.Add(time.Hour)}
	if h := PerTemplate(append(events, legacy))["a"]; h[0].Message != "newest" {
		t.Errorf("legacy event not first: %+v", h[0])
	}
}

func TestPerTemplateKeepsTheNewestLimit(t *testing.T) {
	base := time.Unix(1700000000, 0)
	var events []Event
	for i := range 25 {
		at := base.Add(time.Duration(i) * time.Second)
		events = append(events, Event{Name: EventName("p", at), Reason: Reason("c", "t"), Message: fmt.Sprint(i), Time: at})
	}
	h := PerTemplate(events)["t"]
	if len(h) != Limit || h[0].Message != "24" || h[Limit-1].Message != "15" {
		t.Errorf("history %d entries from %s to %s", len(h), h[0].Message, h[len(h)-1].Message)
	}
	p := Prepend(h, Entry("new", "25", base.Add(time.Minute)))
	if len(p) != Limit || p[0].Message != "25" || p[Limit-1].Message != "16" {
		t.Errorf("prepend: %d entries from %s to %s", len(p), p[0].Message, p[len(p)-1].Message)
	}
}

func TestEventType(t *testing.T) {
	for message, want := range map[string]string{
		"Compliant; notification - configmaps [a] found as specified": "Normal",
		"NonCompliant; violation - configmaps [a] not found":          "Warning",
		"Pending; template-error; dependencies not met":               "Warning",
		"Compliant":             "Warning", // no state separator: not a compliance report
		"compliant; lower case": "Warning",
	} {
		if got := EventType(message); got != want {
			t.Errorf("EventType(%q) = %q, want %q", message, got, want)
		}
	}
}
