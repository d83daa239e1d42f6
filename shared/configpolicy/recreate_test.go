package configpolicy

import (
	"errors"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestHowToUpdate(t *testing.T) {
	cases := []struct {
		opt     policyv1.RecreateOption
		refused bool
		want    UpdateMethod
	}{
		{"", false, UpdateInPlace},
		{"", true, UpdateRefused},
		{policyv1.RecreateNone, false, UpdateInPlace},
		{policyv1.RecreateNone, true, UpdateRefused},
		{policyv1.RecreateIfRequired, false, UpdateInPlace},
		{policyv1.RecreateIfRequired, true, UpdateByRecreating},
		{policyv1.RecreateAlways, false, UpdateByRecreating},
		{policyv1.RecreateAlways, true, UpdateByRecreating},
	}
	for _, tc := range cases {
		if got := HowToUpdate(tc.opt, tc.refused); got != tc.want {
			t.Errorf("recreateOption %q, refused %t: %q, want %q", tc.opt, tc.refused, got, tc.want)
		}
	}
}

func TestRecreateMessages(t *testing.T) {
	err := errors.New("boom")
	cases := []struct{ got, want string }{
		{ImmutableMessage("configmaps", "ns", "a"), `configmaps [a] in namespace ns cannot be updated, likely due to immutable fields not matching, ` +
			`you may set spec["object-templates"][].recreateOption to recreate the object`},
		{ImmutableMessage("persistentvolumes", "", "pv"), `persistentvolumes [pv] cannot be updated, likely due to immutable fields not matching, ` +
			`you may set spec["object-templates"][].recreateOption to recreate the object`},
		{RecreateTimeoutMessage("jobs", "ns", "j"),
			"jobs [j] in namespace ns timed out waiting for the object to delete during recreate, will retry on the next policy evaluation"},
		{RecreateDeleteFailedMessage("jobs", "ns", "j", err), "jobs [j] in namespace ns failed to delete when recreating with the error boom"},
		{RecreateFailedMessage("jobs", "ns", "j", err), "jobs [j] in namespace ns failed to recreate with the error `boom`"},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
	if !AwaitsRecreate([]string{"configmaps [a] found as specified", RecreateTimeoutMessage("jobs", "ns", "j") + "; other"}) {
		t.Error("a recreate timing out does not ask for another evaluation")
	}
	if AwaitsRecreate([]string{ImmutableMessage("configmaps", "ns", "a")}) {
		t.Error("a refused update asks for another evaluation")
	}
}
