package operatorpolicy

import (
	"reflect"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
)

const (
	etcd             = "etcd"
	etcd094          = "etcdoperator.v0.9.4"
	dep              = "cert-manager"
	depCSV           = "cert-manager.v1.14.0"
	manual           = operatorsv1alpha1.ApprovalManual
	auto             = operatorsv1alpha1.ApprovalAutomatic
	requiresApproval = operatorsv1alpha1.InstallPlanPhaseRequiresApproval
)

func operatorPolicy(name, pkg string, enforce bool, approval operatorsv1alpha1.Approval, allowed ...string) Policy {
	p := Policy{Namespace: "local-cluster", Name: name, Enforce: enforce, Approval: approval,
		Subscription: Subscription{Package: pkg, Namespace: opsNS}, Allowed: canonicalAllowed(allowed)}
	return p
}

func TestDecideInstallPlanApproval(t *testing.T) {
	strimziListed := operatorPolicy("strimzi", strimzi, true, manual, csv350, csv351)
	etcdListed := operatorPolicy("etcd", etcd, true, manual, etcd094)
	etcdOther := operatorPolicy("etcd", etcd, true, manual, "etcdoperator.v0.9.2")
	strimziAllAuto := operatorPolicy("strimzi", strimzi, true, auto, "*")
	strimziAllManual := operatorPolicy("strimzi", strimzi, true, manual, "*")
	strimziInform := operatorPolicy("strimzi", strimzi, false, manual, csv350, csv351)
	strimziRemoving := strimziListed
	strimziRemoving.Remove = true
	strimziElsewhere := strimziListed
	strimziElsewhere.Subscription.Namespace = appNS

	plan := func(csvs ...string) operatorsv1alpha1.InstallPlan {
		return installPlanObj(opsNS, "install-ab12c", 1, requiresApproval, false, csvs...)
	}
	strimziPlan := withLookup(plan(csv351), csv351, strimzi)
	sharedPlan := withLookup(withLookup(plan(csv351, etcd094), csv351, strimzi), etcd094, etcd)
	installed := []operatorsv1alpha1.Subscription{subscriptionObj(opsNS, strimzi, csv350, csv351)}
	firstInstall := []operatorsv1alpha1.Subscription{subscriptionObj(opsNS, strimzi, "", csv350)}

	tests := []struct {
		name       string
		plan       operatorsv1alpha1.InstallPlan
		policies   []Policy
		subs       []operatorsv1alpha1.Subscription
		approve    bool
		unapproved []string
		reason     string
	}{
		{"listed CSV of an enforced policy", strimziPlan, []Policy{strimziListed}, installed, true, nil,
			"is approved: " + csv351 + " allowed by OperatorPolicy local-cluster/strimzi"},
		{"shared plan, only one operator allowed", sharedPlan, []Policy{strimziListed, etcdOther}, installed, false, []string{etcd094},
			etcd094 + " (package etcd) is allowed by no enforced OperatorPolicy"},
		{"shared plan, one operator without policy", sharedPlan, []Policy{strimziListed}, installed, false, []string{etcd094}, ""},
		{"shared plan, both allowed", sharedPlan, []Policy{strimziListed, etcdListed}, installed, true, nil,
			"allowed by OperatorPolicy local-cluster/etcd, local-cluster/strimzi"},
		{"lookup of a dependency no policy covers", withLookup(strimziPlan, depCSV, dep), []Policy{strimziListed}, installed, false,
			[]string{depCSV}, depCSV + " (package cert-manager)"},
		{"CSV not listed by a restricting policy", strimziPlan, []Policy{operatorPolicy("strimzi", strimzi, true, manual, csv350)},
			installed, false, []string{csv351}, ""},
		{"inform policy never approves", strimziPlan, []Policy{strimziInform}, installed, false, []string{csv351}, ""},
		{"removing policy never approves", strimziPlan, []Policy{strimziRemoving}, installed, false, []string{csv351}, ""},
		{"policy on another namespace does not count", strimziPlan, []Policy{strimziElsewhere}, installed, false, []string{csv351}, ""},
		{"all allowed, Automatic: upgrade approved", strimziPlan, []Policy{strimziAllAuto}, installed, true, nil, ""},
		{"all allowed, Manual: upgrade not approved", strimziPlan, []Policy{strimziAllManual}, installed, false, []string{csv351}, ""},
		{"all allowed, Manual: first install approved", withLookup(plan(csv350), csv350, strimzi), []Policy{strimziAllManual},
			firstInstall, true, nil, ""},
		{"one approving policy among several suffices", strimziPlan, []Policy{strimziInform, strimziAllManual, strimziListed},
			installed, true, nil, ""},
		{"no lookups: package from the Subscription's currentCSV", plan(csv351), []Policy{strimziListed}, installed, true, nil, ""},
		{"no lookups, no Subscription: package unknown", plan(csv351), []Policy{strimziListed}, nil, false, []string{csv351},
			csv351 + " has no known package"},
		{"unreadable lookup", func() operatorsv1alpha1.InstallPlan {
			p := strimziPlan
			p.Status.BundleLookups = []operatorsv1alpha1.BundleLookup{{Identifier: csv351, Properties: "{"}}
			return p
		}(), []Policy{strimziListed}, nil, false, []string{csv351}, "status.bundleLookups[0].properties: not a properties document"},
		{"lookup without identifier", func() operatorsv1alpha1.InstallPlan {
			p := strimziPlan
			p.Status.BundleLookups = append(p.Status.BundleLookups, operatorsv1alpha1.BundleLookup{})
			return p
		}(), []Policy{strimziAllAuto}, installed, false, []string{""}, "a bundle lookup has no identifier"},
		{"already approved", installPlanObj(opsNS, "install-ab12c", 1, requiresApproval, true, csv351), []Policy{strimziListed}, installed, false, nil,
			"InstallPlan openshift-operators/install-ab12c is already approved"},
		{"not waiting for approval", installPlanObj(opsNS, "install-ab12c", 1, operatorsv1alpha1.InstallPlanPhaseInstalling, false, csv351),
			[]Policy{strimziListed}, installed, false, nil, `is in phase "Installing", not RequiresApproval`},
		{"no CSVs", plan(), []Policy{strimziAllAuto}, installed, false, nil, "names no ClusterServiceVersion"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := tc.plan
			got := DecideInstallPlanApproval(&plan, tc.policies, tc.subs)
			if got.Approve != tc.approve || !reflect.DeepEqual(got.Unapproved, tc.unapproved) {
				t.Errorf("got approve=%t unapproved=%q (%s); want approve=%t unapproved=%q", got.Approve, got.Unapproved, got.Reason, tc.approve, tc.unapproved)
			}
			if !strings.HasPrefix(got.Reason, "InstallPlan openshift-operators/install-ab12c ") || !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("reason %q must name the plan and contain %q", got.Reason, tc.reason)
			}
		})
	}
}

func TestDecideInstallPlanApprovalNil(t *testing.T) {
	if got := DecideInstallPlanApproval(nil, []Policy{operatorPolicy("s", strimzi, true, auto)}, nil); got.Approve {
		t.Error("a nil InstallPlan was approved")
	}
}

func TestBundlePackage(t *testing.T) {
	tests := []struct {
		name, properties, want, err string
	}{
		{"etcd bundle", `{"properties":[{"type":"olm.gvk","value":{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}},` +
			`{"type":"olm.package","value":{"packageName":"etcd","version":"0.9.4"}}]}`, "etcd", ""},
		{"required package is not the package", `{"properties":[{"type":"olm.package.required","value":{"packageName":"dep"}},` +
			`{"type":"olm.package","value":{"packageName":"etcd"}}]}`, "etcd", ""},
		{"same package twice", `{"properties":[{"type":"olm.package","value":{"packageName":"etcd"}},{"type":"olm.package","value":{"packageName":"etcd"}}]}`, "etcd", ""},
		{"no olm.package", `{"properties":[{"type":"olm.gvk","value":{}}]}`, "", ""},
		{"empty", "  ", "", ""},
		{"not JSON", `{"properties":`, "", "not a properties document"},
		{"properties not a list", `{"properties":{}}`, "", "not a properties document"},
		{"value not an object", `{"properties":[{"type":"olm.package","value":"etcd"}]}`, "", "olm.package value: "},
		{"value missing", `{"properties":[{"type":"olm.package"}]}`, "", "olm.package value: "},
		{"no packageName", `{"properties":[{"type":"olm.package","value":{"version":"1"}}]}`, "", "olm.package value has no packageName"},
		{"two packages", `{"properties":[{"type":"olm.package","value":{"packageName":"a"}},{"type":"olm.package","value":{"packageName":"b"}}]}`,
			"", "olm.package names two packages (a and b)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BundlePackage(tc.properties)
			if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("got %q, %v; want %q, error containing %q", got, err, tc.want, tc.err)
			}
		})
	}
}
