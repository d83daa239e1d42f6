package krm

import (
	"slices"
	"testing"
)

func TestSelectNamed(t *testing.T) {
	items := []string{"a/p", "b/p", "a/q"}
	key := func(s string) (string, string) { return s[:1], s[2:] }
	cases := []struct {
		names   []string
		want    []string
		wantErr string
	}{
		{names: []string{"p"}, want: []string{"a/p", "b/p"}},
		{names: []string{"b/p", "q"}, want: []string{"b/p", "a/q"}},
		{names: []string{"q", "a/q"}, want: []string{"a/q"}},
		{names: []string{"p", "c/p", "r"}, want: []string{"a/p", "b/p"},
			wantErr: "policies[1]: no Policy \"c/p\" in the input\npolicies[2]: no Policy \"r\" in the input"},
	}
	for _, c := range cases {
		got, err := SelectNamed(items, key, "policies", c.names)
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: selected %v, want %v", c.names, got, c.want)
		}
		if gotErr := errString(err); gotErr != c.wantErr {
			t.Errorf("%v: error %q, want %q", c.names, gotErr, c.wantErr)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
