package operatorpolicy

import (
	"context"
	"encoding/json"
	"fmt"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	depclient "github.com/stolostron/kubernetes-dependency-watches/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/templatewatch"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// templateError is an OperatorPolicy whose templates cannot be resolved: the
// policy is invalid until they can.
type templateError struct{ err error }

func (e templateError) Error() string { return e.err.Error() }

func (e templateError) Unwrap() error { return e.err }

// resolveTemplates returns op with the managed-cluster templates of the
// fields OCM resolves (spec.versions, spec.subscription, spec.operatorGroup)
// resolved against the cluster, watching what they read; op itself is left
// alone. A template that cannot be resolved gives a templateError; other
// errors are worth a retry. With the disable-templates annotation, op is
// returned as it is.
func (r *reconciler) resolveTemplates(ctx context.Context, op *v1beta1.OperatorPolicy) (*v1beta1.OperatorPolicy, error) {
	if templates.Disabled(op.Annotations) {
		return op, nil
	}
	resolved := op.DeepCopy()
	var failed error
	err := r.templates.Batch(ctx, watcherOf(op), func(res templates.Resolver, opts gotemplates.ResolveOptions) {
		failed = resolveSpec(res, opts, &resolved.Spec)
	})
	if err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, templateError{failed}
	}
	return resolved, nil
}

// watcherOf identifies an OperatorPolicy to the template watcher.
func watcherOf(op *v1beta1.OperatorPolicy) depclient.ObjectIdentifier {
	return templatewatch.Watcher(v1beta1.GroupVersion.WithKind("OperatorPolicy"), op.Namespace, op.Name)
}

// resolveSpec resolves the templated fields of spec in place.
func resolveSpec(res templates.Resolver, opts gotemplates.ResolveOptions, spec *v1beta1.OperatorPolicySpec) error {
	// resolve resolves one field into out; false when it holds no template.
	resolve := func(field string, value any, out any) (bool, error) {
		raw, err := json.Marshal(value)
		if err != nil {
			return false, fmt.Errorf("%s cannot be encoded: %w", field, err)
		}
		if !templates.HasManagedTemplate(raw) {
			return false, nil
		}
		return true, templates.ResolveJSONField(res, field, raw, opts, out)
	}
	var versions []string
	if ok, err := resolve("spec.versions", spec.Versions, &versions); err != nil {
		return err
	} else if ok {
		spec.Versions = versions
	}
	var sub v1beta1.Subscription
	if ok, err := resolve("spec.subscription", spec.Subscription, &sub); err != nil {
		return err
	} else if ok {
		spec.Subscription = sub
	}
	if spec.OperatorGroup != nil {
		og := &v1beta1.OperatorGroup{}
		if ok, err := resolve("spec.operatorGroup", spec.OperatorGroup, og); err != nil {
			return err
		} else if ok {
			spec.OperatorGroup = og
		}
	}
	return nil
}
