// Package history turns the compliance events of a replicated policy into the
// per-template history of its status, as OCM's status sync reads them.
//
// Contract:
//
//   - A compliance event's reason is "policy: <namespace>/<template>" (or
//     "policy: <template>" for a cluster-scoped template), matched ignoring case
//     and spaces; other events are not compliance events.
//   - Event names are "<policy>.<nanoseconds as hex>" (EventName), so the order
//     of events is known to the nanosecond although their timestamps are kept to
//     the second; an event whose name carries no such suffix is ordered by its
//     timestamp.
//   - A compliance event is Normal when its message starts "Compliant;" and a
//     Warning otherwise (EventType).
//   - PerTemplate keeps, per template, the Limit newest events, newest first,
//     each once (by name), with timestamps truncated to the second as the API
//     server stores them.
//
// The package is pure: it reads only its arguments.
package history
