package history

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// Limit is how many entries a template's history keeps.
const Limit = 10

// reasonPattern matches a compliance event's reason; group 2 is the template.
var reasonPattern = regexp.MustCompile(`(?i)^policy:\s*(?:([a-z0-9.-]+)\s*/)?(.+)$`)

// Reason is the reason of a compliance event about template in namespace
// (empty for a cluster-scoped template).
func Reason(namespace, template string) string {
	if namespace == "" {
		return "policy: " + template
	}
	return "policy: " + namespace + "/" + template
}

// TemplateOf returns the template a compliance event's reason names, and
// whether the reason is one of a compliance event at all.
func TemplateOf(reason string) (string, bool) {
	m := reasonPattern.FindStringSubmatch(strings.TrimSpace(reason))
	if m == nil {
		return "", false
	}
	name := strings.TrimSpace(m[2])
	return name, name != ""
}

// EventName is the name of a compliance event about policy emitted at at.
func EventName(policy string, at time.Time) string {
	return policy + "." + strconv.FormatInt(at.UnixNano(), 16)
}

// TimeOf reads the emission time from an event name made by EventName.
func TimeOf(eventName string) (time.Time, bool) {
	i := strings.LastIndexByte(eventName, '.')
	if i < 0 {
		return time.Time{}, false
	}
	nanos, err := strconv.ParseInt(eventName[i+1:], 16, 64)
	if err != nil || nanos <= 0 {
		return time.Time{}, false
	}
	return time.Unix(0, nanos), true
}

// Event is what PerTemplate needs of a compliance event.
type Event struct {
	Name    string
	Reason  string
	Message string
	// Time is the event's timestamp, used when the name carries none.
	Time time.Time
}

// PerTemplate returns the history of each template named by the events:
// newest first, at most Limit entries, each event once.
func PerTemplate(events []Event) map[string][]policyv1.ComplianceHistory {
	type timed struct {
		Event
		at time.Time
	}
	byTemplate := map[string][]timed{}
	for _, e := range events {
		template, ok := TemplateOf(e.Reason)
		if !ok {
			continue
		}
		at, ok := TimeOf(e.Name)
		if !ok {
			at = e.Time
		}
		byTemplate[template] = append(byTemplate[template], timed{Event: e, at: at})
	}
	out := make(map[string][]policyv1.ComplianceHistory, len(byTemplate))
	for template, list := range byTemplate {
		slices.SortStableFunc(list, func(a, b timed) int {
			if c := b.at.Compare(a.at); c != 0 {
				return c
			}
			return cmp.Compare(b.Name, a.Name)
		})
		list = slices.CompactFunc(list, func(a, b timed) bool { return a.Name == b.Name })
		if len(list) > Limit {
			list = list[:Limit]
		}
		entries := make([]policyv1.ComplianceHistory, len(list))
		for i, e := range list {
			entries[i] = Entry(e.Name, e.Message, e.at)
		}
		out[template] = entries
	}
	return out
}

// Entry is the history entry of an event, its timestamp truncated to the second.
func Entry(name, message string, at time.Time) policyv1.ComplianceHistory {
	return policyv1.ComplianceHistory{
		EventName:     name,
		Message:       message,
		LastTimestamp: metav1.NewTime(at.Truncate(time.Second)),
	}
}

// Prepend returns entries with e first, at most Limit long.
func Prepend(entries []policyv1.ComplianceHistory, e policyv1.ComplianceHistory) []policyv1.ComplianceHistory {
	out := append([]policyv1.ComplianceHistory{e}, entries...)
	if len(out) > Limit {
		out = out[:Limit]
	}
	return out
}

// EventType is the type of a compliance event with message: Normal when the
// message reports Compliant, Warning otherwise, as OCM writes them.
func EventType(message string) string {
	if strings.HasPrefix(message, string(policyv1.Compliant)+";") {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}
