package spoke

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/compliance"
	"github.com/fleetpolicy/fleetpolicy/shared/history"
)

// emittedKey identifies a template of a policy in TemplateSync.emitted, which
// holds the history entry of the last compliance event template sync wrote
// about it.
type emittedKey struct {
	policy   types.UID
	name     string // the policy's
	template string
}

// forgetEmitted drops what emitted holds about a policy that is gone.
func (t *TemplateSync) forgetEmitted(policy string) {
	t.emitted.Range(func(k, _ any) bool {
		if k.(emittedKey).name == policy {
			t.emitted.Delete(k)
		}
		return true
	})
}

// report writes the compliance events template sync owes (Pending templates,
// template errors) and the policy's status on the managed cluster (HubStatusSync
// copies it to the hub).
func (t *TemplateSync) report(ctx context.Context, p *policyv1.Policy, results []templateResult) error {
	hist, err := t.history(ctx, p)
	if err != nil {
		return err
	}
	for _, r := range results {
		key := emittedKey{policy: p.UID, name: p.Name, template: r.name}
		if r.event == "" {
			t.emitted.Delete(key)
			continue
		}
		h := hist[r.name]
		if len(h) > 0 && h[0].Message == r.event {
			continue // said already
		}
		if v, ok := t.emitted.Load(key); ok && v.(policyv1.ComplianceHistory).Message == r.event {
			// Written, but not in the cache yet.
			if e := v.(policyv1.ComplianceHistory); !slices.ContainsFunc(h, func(x policyv1.ComplianceHistory) bool { return x.EventName == e.EventName }) {
				hist[r.name] = history.Prepend(h, e)
			}
			continue
		}
		name, at, err := t.events.compliance(ctx, policyRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}, r.meta.Namespace, r.name, r.event)
		if err != nil {
			return err
		}
		e := history.Entry(name, r.event, at)
		t.emitted.Store(key, e)
		hist[r.name] = history.Prepend(h, e)
	}

	status := p.Status.DeepCopy()
	status.Details = make([]*policyv1.DetailsPerTemplate, len(results))
	states := make([]policyv1.ComplianceState, len(results))
	settled := true
	for i, r := range results {
		status.Details[i] = &policyv1.DetailsPerTemplate{TemplateMeta: r.meta, ComplianceState: r.state, History: hist[r.name]}
		states[i] = r.state
		settled = settled && r.settled
	}
	status.ComplianceState = compliance.Aggregate(states)
	if settled {
		status.ObservedGeneration = p.Generation
	}
	if equality.Semantic.DeepEqual(*status, p.Status) {
		return nil
	}
	updated := p.DeepCopy()
	updated.Status = *status
	return client.IgnoreNotFound(t.Client.Status().Patch(ctx, updated, client.MergeFrom(p)))
}

// history reads the compliance events about p from the cache, per template.
func (t *TemplateSync) history(ctx context.Context, p *policyv1.Policy) (map[string][]policyv1.ComplianceHistory, error) {
	list := &corev1.EventList{}
	if err := t.Client.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingFields{indexEventInvolvedUID: string(p.UID)}); err != nil {
		return nil, err
	}
	events := make([]history.Event, 0, len(list.Items))
	for _, ev := range list.Items {
		at := ev.LastTimestamp.Time
		if at.IsZero() {
			at = ev.EventTime.Time
		}
		events = append(events, history.Event{Name: ev.Name, Reason: ev.Reason, Message: ev.Message, Time: at})
	}
	return history.PerTemplate(events), nil
}
