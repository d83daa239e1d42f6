package history_test

import (
	"fmt"
	"time"

	"github.com/fleetpolicy/fleetpolicy/shared/history"
)

// A compliance event's name carries the time it was emitted, and its reason the
// template it is about; PerTemplate turns the events of a replica back into
// each template's status.details history, newest first.
func ExamplePerTemplate() {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	name := history.EventName("policies.require-labels", t0)
	at, _ := history.TimeOf(name)
	fmt.Println(at.Equal(t0))

	reason := history.Reason("prod-east", "require-labels")
	template, _ := history.TemplateOf(reason)
	fmt.Println(reason, "->", template)
	fmt.Println(history.EventType("NonCompliant; violation - namespaces [team-a] missing label owner"))

	events := []history.Event{
		{Name: history.EventName("policies.require-labels", t0), Reason: reason,
			Message: "NonCompliant; violation - namespaces [team-a] missing label owner"},
		{Name: history.EventName("policies.require-labels", t0.Add(time.Minute)), Reason: reason,
			Message: "Compliant; notification - namespaces [team-a] found as specified"},
	}
	for _, h := range history.PerTemplate(events)[template] {
		fmt.Println(h.LastTimestamp.UTC().Format(time.TimeOnly), h.Message)
	}
	// Output:
	// true
	// policy: prod-east/require-labels -> require-labels
	// Warning
	// 12:01:00 Compliant; notification - namespaces [team-a] found as specified
	// 12:00:00 NonCompliant; violation - namespaces [team-a] missing label owner
}
