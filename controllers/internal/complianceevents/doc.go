// Package complianceevents writes compliance events: the core Events about a
// Policy (or a policy template) from which OCM's status sync, and the spoke's,
// build each template's compliance history (package history).
//
// Contract:
//   - An event is named history.EventName(<involved object>, <time>); when that
//     name is taken (another event in the same nanosecond), Write moves the time
//     on by a nanosecond until it is free, so events are never lost or merged.
//     Create writes an event under a given name once: the copy of an event
//     written elsewhere.
//   - The type is Normal when the message starts "Compliant;" and Warning
//     otherwise (history.EventType), the count 1 and both timestamps the time.
//
// It is the one event writer of the spoke (template sync, hub status sync), of
// the ConfigurationPolicy controller and of the OperatorPolicy controller.
package complianceevents
