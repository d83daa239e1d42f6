package spoke

import "testing"

// TestEvaluatorSet: the flag takes fleetpolicy or ocm, and an empty value (an
// OCM add-on's customized variable left unset) is the default; anything else
// is refused.
func TestEvaluatorSet(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    Evaluator
		wantErr bool
	}{
		{value: "fleetpolicy", want: EvaluatorFleetpolicy},
		{value: "ocm", want: EvaluatorOCM},
		{value: "", want: EvaluatorFleetpolicy},
		{value: "OCM", wantErr: true},
		{value: "{{CONFIGURATIONPOLICY_EVALUATOR}}", wantErr: true},
	} {
		e := EvaluatorOCM
		if tc.value == "ocm" {
			e = EvaluatorFleetpolicy
		}
		err := e.Set(tc.value)
		if (err != nil) != tc.wantErr {
			t.Errorf("Set(%q): error %v, want error %v", tc.value, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && e != tc.want {
			t.Errorf("Set(%q) = %q, want %q", tc.value, e, tc.want)
		}
	}
}
