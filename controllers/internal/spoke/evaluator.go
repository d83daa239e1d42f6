package spoke

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/operatorpolicy"
)

// Evaluator says which controller evaluates and enforces the templates of one
// kind (ConfigurationPolicy or OperatorPolicy) on the managed cluster. Template
// sync, dependency ordering, the encryption-key copy and status sync are the
// spoke's whichever it is.
type Evaluator string

const (
	// EvaluatorFleetpolicy is the spoke's own controller (the default).
	EvaluatorFleetpolicy Evaluator = "fleetpolicy"
	// EvaluatorOCM is OCM's config-policy-controller, running on the managed
	// cluster next to the spoke: the spoke does not start its own controller
	// for the kind, and reports the status and compliance Events OCM's
	// controller writes.
	EvaluatorOCM Evaluator = "ocm"
)

// String is the evaluator's name (flag.Value).
func (e *Evaluator) String() string { return string(*e) }

// Set accepts fleetpolicy or ocm (flag.Value); an empty value is the default,
// fleetpolicy, as an OCM add-on renders a customized variable left unset
// (--configurationpolicy-evaluator={{CONFIGURATIONPOLICY_EVALUATOR}}).
func (e *Evaluator) Set(value string) error {
	if value == "" {
		value = string(EvaluatorFleetpolicy)
	}
	if err := Evaluator(value).validate(); err != nil {
		return err
	}
	*e = Evaluator(value)
	return nil
}

func (e Evaluator) validate() error {
	switch e {
	case EvaluatorFleetpolicy, EvaluatorOCM:
		return nil
	}
	return fmt.Errorf("%q is not an evaluator: want %s or %s", string(e), EvaluatorFleetpolicy, EvaluatorOCM)
}

// validateEvaluators checks the evaluators of o, naming the option at fault.
// OperatorPolicies can go to OCM's config-policy-controller only with the
// ConfigurationPolicies: OCM v0.19's controller always evaluates
// ConfigurationPolicies (it has no flag to leave them), so the two
// evaluators would act on the same policies.
func (o Options) validateEvaluators() error {
	if err := o.ConfigurationPolicyEvaluator.validate(); err != nil {
		return fmt.Errorf("spoke: ConfigurationPolicyEvaluator (--configurationpolicy-evaluator): %w", err)
	}
	if err := o.OperatorPolicyEvaluator.validate(); err != nil {
		return fmt.Errorf("spoke: OperatorPolicyEvaluator (--operatorpolicy-evaluator): %w", err)
	}
	if o.OperatorPolicyEvaluator == EvaluatorOCM && o.ConfigurationPolicyEvaluator != EvaluatorOCM {
		return fmt.Errorf("spoke: OperatorPolicyEvaluator (--operatorpolicy-evaluator) %s needs ConfigurationPolicyEvaluator (--configurationpolicy-evaluator) %s too: "+
			"OCM's config-policy-controller always evaluates ConfigurationPolicies, so both would evaluate them", EvaluatorOCM, EvaluatorOCM)
	}
	return nil
}

// releaseRetry is how long releasing the OperatorPolicy finalizers waits
// before it tries again after a failure.
const releaseRetry = 10 * time.Second

// releasingOperatorPolicyFinalizers is the runnable of a spoke whose
// OperatorPolicies OCM's config-policy-controller evaluates: it releases the
// finalizer the spoke's own OperatorPolicy controller set
// (operatorpolicy.Finalizer) while it evaluated them, since nothing would
// remove it now. Deleting an OperatorPolicy then removes nothing, as with
// OCM's controller. It tries until it succeeds or the spoke stops.
func releasingOperatorPolicyFinalizers(mgr ctrl.Manager, logger logr.Logger) manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		for {
			released, err := operatorpolicy.ReleaseFinalizers(ctx, mgr.GetClient())
			for _, key := range released {
				logger.Info("released the finalizer of an OperatorPolicy that OCM's config-policy-controller evaluates now", "operatorPolicy", key)
			}
			if err == nil {
				return nil
			}
			logger.Error(err, "releasing OperatorPolicy finalizers; trying again", "after", releaseRetry)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(releaseRetry):
			}
		}
	})
}
