package operatorpolicy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// Names shared by the OperatorPolicy user stories (testdata/stories).
const (
	strimzi    = "strimzi-kafka-operator"
	csv350     = "strimzi-cluster-operator.v0.35.0"
	csv351     = "strimzi-cluster-operator.v0.35.1"
	opsNS      = "openshift-operators"
	appNS      = "strimzi-app-one"
	catalog    = "community-operators"
	catalogNS  = "openshift-marketplace"
	strimziDep = "strimzi-cluster-operator"
)

var t0 = time.Date(2023, 7, 14, 7, 34, 28, 0, time.UTC)

// story reads testdata/stories/storyN.yaml strictly.
func story(t *testing.T, n int) *v1beta1.OperatorPolicy {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "stories", fmt.Sprintf("story%d.yaml", n)))
	if err != nil {
		t.Fatal(err)
	}
	op := &v1beta1.OperatorPolicy{}
	if err := yaml.UnmarshalStrict(data, op); err != nil {
		t.Fatalf("story %d: %v", n, err)
	}
	return op
}

// normalized is story n normalised, after edit (when not nil) changes its spec.
func normalized(t *testing.T, n int, edit func(*v1beta1.OperatorPolicySpec)) Policy {
	t.Helper()
	op := story(t, n)
	if edit != nil {
		edit(&op.Spec)
	}
	p, err := Normalize(op)
	if err != nil {
		t.Fatalf("story %d: %v", n, err)
	}
	return p
}

func subscriptionObj(ns, pkg, installed, current string) operatorsv1alpha1.Subscription {
	return operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Name: pkg, Namespace: ns},
		Spec:       &operatorsv1alpha1.SubscriptionSpec{Package: pkg},
		Status:     operatorsv1alpha1.SubscriptionStatus{InstalledCSV: installed, CurrentCSV: current},
	}
}

// desiredSubscriptionObj is what DesiredSubscription wants for p, as found on a
// cluster, with the given CSVs.
func desiredSubscriptionObj(p Policy, installed, current string) operatorsv1alpha1.Subscription {
	s := *DesiredSubscription(p)
	s.Status = operatorsv1alpha1.SubscriptionStatus{InstalledCSV: installed, CurrentCSV: current}
	return s
}

func installPlanObj(ns, name string, generation int, phase operatorsv1alpha1.InstallPlanPhase, approved bool, csvs ...string) operatorsv1alpha1.InstallPlan {
	return operatorsv1alpha1.InstallPlan{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       operatorsv1alpha1.InstallPlanSpec{ClusterServiceVersionNames: csvs, Approval: operatorsv1alpha1.ApprovalManual, Approved: approved, Generation: generation},
		Status:     operatorsv1alpha1.InstallPlanStatus{Phase: phase},
	}
}

// withLookup adds a bundle lookup of csv in package pkg.
func withLookup(plan operatorsv1alpha1.InstallPlan, csv, pkg string) operatorsv1alpha1.InstallPlan {
	plan.Status.BundleLookups = append(plan.Status.BundleLookups, operatorsv1alpha1.BundleLookup{
		Identifier: csv,
		Properties: `{"properties":[{"type":"olm.gvk","value":{"group":"x.io","kind":"X","version":"v1"}},` +
			`{"type":"olm.package","value":{"packageName":"` + pkg + `","version":"1.0.0"}}]}`,
	})
	return plan
}

func csvObj(ns, name string, phase operatorsv1alpha1.ClusterServiceVersionPhase, deployments ...string) operatorsv1alpha1.ClusterServiceVersion {
	csv := operatorsv1alpha1.ClusterServiceVersion{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Status:     operatorsv1alpha1.ClusterServiceVersionStatus{Phase: phase},
	}
	if phase == operatorsv1alpha1.CSVPhaseSucceeded {
		csv.Status.Reason = operatorsv1alpha1.CSVReasonInstallSuccessful
		csv.Status.Message = "install strategy completed with no errors"
	}
	for _, d := range deployments {
		csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs = append(csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs,
			operatorsv1alpha1.StrategyDeploymentSpec{Name: d})
	}
	return csv
}

func deploymentObj(ns, name string, unavailable int32) appsv1.Deployment {
	return appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Status:     appsv1.DeploymentStatus{Replicas: 1, UnavailableReplicas: unavailable, AvailableReplicas: 1 - unavailable},
	}
}

func catalogObj(state string) *operatorsv1alpha1.CatalogSource {
	cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Name: catalog, Namespace: catalogNS}}
	if state != "" {
		cs.Status.GRPCConnectionState = &operatorsv1alpha1.GRPCConnectionState{LastObservedState: state}
	}
	return cs
}

func operatorGroupObj(ns, name string, targets ...string) operatorsv1.OperatorGroup {
	return operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: targets},
	}
}

// healthyInstall is what a cluster shows once p's operator runs at csv: the
// desired OperatorGroup and Subscription, a complete InstallPlan, a succeeded
// CSV with an available Deployment and a ready CatalogSource.
func healthyInstall(t *testing.T, p Policy, csv string) Observed {
	t.Helper()
	ns := p.Subscription.Namespace
	og, err := DesiredOperatorGroup(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Observed{
		OperatorGroups:         []operatorsv1.OperatorGroup{*og},
		Subscriptions:          []operatorsv1alpha1.Subscription{desiredSubscriptionObj(p, csv, csv)},
		InstallPlans:           []operatorsv1alpha1.InstallPlan{installPlanObj(ns, "install-1", 1, operatorsv1alpha1.InstallPlanPhaseComplete, true, csv)},
		ClusterServiceVersions: []operatorsv1alpha1.ClusterServiceVersion{csvObj(ns, csv, operatorsv1alpha1.CSVPhaseSucceeded, strimziDep)},
		Deployments:            []appsv1.Deployment{deploymentObj(ns, strimziDep, 0)},
		CatalogSource:          catalogObj("READY"),
	}
}

// withPendingUpgrade turns a healthy install at csv350 into one whose upgrade to
// csv351 waits for approval in InstallPlan install-2.
func withPendingUpgrade(obs Observed) Observed {
	ns := obs.Subscriptions[0].Namespace
	obs.Subscriptions[0].Status.CurrentCSV = csv351
	obs.InstallPlans = append(obs.InstallPlans,
		withLookup(installPlanObj(ns, "install-2", 2, operatorsv1alpha1.InstallPlanPhaseRequiresApproval, false, csv351), csv351, strimzi))
	return obs
}

// conditionsOf maps condition types to "Status/Reason".
func conditionsOf(ev Evaluation) map[string]string {
	out := map[string]string{}
	for _, c := range ev.Conditions {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

func conditionOf(t *testing.T, ev Evaluation, typ string) metav1.Condition {
	t.Helper()
	for _, c := range ev.Conditions {
		if c.Type == typ {
			return c
		}
	}
	t.Fatalf("no %s condition in %v", typ, conditionsOf(ev))
	return metav1.Condition{}
}

// relatedOf maps "Kind namespace/name" to "compliant: reason".
func relatedOf(ev Evaluation) map[string]string {
	out := map[string]string{}
	for _, r := range ev.RelatedObjects {
		out[r.Object.Kind+" "+objectRef(r.Object.Metadata.Namespace, r.Object.Metadata.Name)] = r.Compliant + ": " + r.Reason
	}
	return out
}

func subscriptionCondition(t operatorsv1alpha1.SubscriptionConditionType, reason, message string) operatorsv1alpha1.SubscriptionCondition {
	return operatorsv1alpha1.SubscriptionCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message}
}

// raw is v as the JSON of a field the schema lets hold a template.
func raw(v any) *runtime.RawExtension {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &runtime.RawExtension{Raw: b}
}
