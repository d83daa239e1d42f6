package binding

import (
	"reflect"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestRootStatus(t *testing.T) {
	// Example 5 of examples/api/selective-enforcement.yaml: E and F are selected only by the restricted binding.
	res, err := Resolve(rootPolicy(inform), nil, []policyv1.PlacementBinding{
		bind("initial", rule("placementrule-initial")),
		restrictedEnforcing(bind("sub-2", rule("placementrule-sub-2"))),
	}, exampleDecisions)
	if err != nil {
		t.Fatal(err)
	}
	status := func(cluster string, state policyv1.ComplianceState) *policyv1.CompliancePerClusterStatus {
		return &policyv1.CompliancePerClusterStatus{ComplianceState: state, ClusterName: cluster, ClusterNamespace: cluster}
	}
	const c, nc, p = policyv1.Compliant, policyv1.NonCompliant, policyv1.Pending

	tests := []struct {
		name          string
		res           *Resolution
		observed      map[string]policyv1.ComplianceState
		wantStatus    []*policyv1.CompliancePerClusterStatus
		wantCompliant policyv1.ComplianceState
	}{
		{
			// Upstream lists E with an empty state here and reports "" (propagator.md §2.4).
			name:          "restricted-only clusters never appear and never spoil compliance",
			res:           res,
			observed:      map[string]policyv1.ComplianceState{"A": c, "B": c, "C": c, "D": c},
			wantStatus:    []*policyv1.CompliancePerClusterStatus{status("A", c), status("B", c), status("C", c), status("D", c)},
			wantCompliant: c,
		},
		{
			name:          "observed states of unbound clusters are ignored",
			res:           res,
			observed:      map[string]policyv1.ComplianceState{"A": c, "B": c, "C": c, "D": c, "E": nc, "Z": nc},
			wantStatus:    []*policyv1.CompliancePerClusterStatus{status("A", c), status("B", c), status("C", c), status("D", c)},
			wantCompliant: c,
		},
		{
			name:          "missing replica is unknown and beats compliant",
			res:           res,
			observed:      map[string]policyv1.ComplianceState{"A": c, "B": c, "D": c},
			wantStatus:    []*policyv1.CompliancePerClusterStatus{status("A", c), status("B", c), status("C", ""), status("D", c)},
			wantCompliant: "",
		},
		{
			name:          "pending beats unknown",
			res:           res,
			observed:      map[string]policyv1.ComplianceState{"A": c, "B": p},
			wantStatus:    []*policyv1.CompliancePerClusterStatus{status("A", c), status("B", p), status("C", ""), status("D", "")},
			wantCompliant: p,
		},
		{
			name:          "noncompliant beats pending",
			res:           res,
			observed:      map[string]policyv1.ComplianceState{"A": p, "B": c, "C": nc, "D": ""},
			wantStatus:    []*policyv1.CompliancePerClusterStatus{status("A", p), status("B", c), status("C", nc), status("D", "")},
			wantCompliant: nc,
		},
		{
			name:          "no bound cluster",
			res:           &Resolution{},
			observed:      map[string]policyv1.ComplianceState{"A": c},
			wantStatus:    nil,
			wantCompliant: "",
		},
		{
			name:          "nil resolution",
			res:           nil,
			wantStatus:    nil,
			wantCompliant: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotStatus, gotCompliant := tt.res.RootStatus(tt.observed)
			if !reflect.DeepEqual(gotStatus, tt.wantStatus) {
				t.Errorf("status = %+v, want %+v", derefAll(gotStatus), derefAll(tt.wantStatus))
			}
			if gotCompliant != tt.wantCompliant {
				t.Errorf("compliant = %q, want %q", gotCompliant, tt.wantCompliant)
			}
		})
	}
}

func derefAll(statuses []*policyv1.CompliancePerClusterStatus) []policyv1.CompliancePerClusterStatus {
	var out []policyv1.CompliancePerClusterStatus
	for _, s := range statuses {
		out = append(out, *s)
	}
	return out
}
