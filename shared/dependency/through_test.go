package dependency

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestCycleThrough checks the cycle search of a managed cluster's policies:
// the cycle through the policy, found by reading only what it reaches, and
// the namespace's list read only for a dependency on a template.
func TestCycleThrough(t *testing.T) {
	const C = policyv1.Compliant
	// replica is a policy of the cluster namespace, named by its replicated name.
	replica := func(name string, deps []policyv1.PolicyDependency, templates ...*policyv1.PolicyTemplate) *policyv1.Policy {
		return policy("cluster1/"+name, deps, templates...)
	}
	cases := []struct {
		name      string
		start     string
		policies  []*policyv1.Policy
		want      string
		wantGets  []string
		wantLists int
	}{
		{
			name:  "no dependency",
			start: "ns.a",
			policies: []*policyv1.Policy{
				replica("ns.a", nil, config("a-cfg")),
				replica("ns.b", deps(onPolicy("ns.a", C)), config("b-cfg")),
			},
		},
		{
			name:  "two policies waiting for each other, named from the start",
			start: "ns.b",
			policies: []*policyv1.Policy{
				replica("ns.a", deps(onPolicy("ns.b", C)), config("a-cfg")),
				replica("ns.b", deps(onPolicy("ns.a", C)), config("b-cfg")),
			},
			want:     "Policy ns.b -> ConfigurationPolicy b-cfg -> Policy ns.a -> ConfigurationPolicy a-cfg -> Policy ns.b",
			wantGets: []string{"ns.a"},
		},
		{
			name:  "a cycle through templates, found among all the policies",
			start: "ns.a",
			policies: []*policyv1.Policy{
				replica("ns.a", nil, config("a-cfg", onConfig("b-cfg", C))),
				replica("ns.b", nil, config("b-cfg", onPolicy("ns.a", C))),
			},
			want:      "Policy ns.a -> ConfigurationPolicy a-cfg -> ConfigurationPolicy b-cfg -> Policy ns.a",
			wantGets:  []string{"ns.b"},
			wantLists: 1,
		},
		{
			name:  "two templates waiting for each other, never through a Policy",
			start: "ns.a",
			policies: []*policyv1.Policy{
				replica("ns.a", nil, config("a-cfg", onConfig("b-cfg", C))),
				replica("ns.b", nil, config("b-cfg", onConfig("a-cfg", C))),
			},
			want:      "ConfigurationPolicy a-cfg -> ConfigurationPolicy b-cfg -> ConfigurationPolicy a-cfg",
			wantGets:  []string{"ns.b"},
			wantLists: 1,
		},
		{
			name:  "a cycle further on, not through the policy",
			start: "ns.a",
			policies: []*policyv1.Policy{
				replica("ns.a", deps(onPolicy("ns.b", C)), config("a-cfg")),
				replica("ns.b", deps(onPolicy("ns.c", C)), config("b-cfg")),
				replica("ns.c", deps(onPolicy("ns.b", C)), config("c-cfg")),
			},
			wantGets: []string{"ns.b", "ns.c"},
		},
		{
			name:  "a ring of three, each read once",
			start: "ns.a",
			policies: []*policyv1.Policy{
				replica("ns.a", nil, config("a-cfg", onPolicy("ns.b", C))),
				replica("ns.b", nil, config("b-cfg", onPolicy("ns.c", C))),
				replica("ns.c", nil, config("c-cfg", onPolicy("ns.a", C))),
			},
			want: "Policy ns.a -> ConfigurationPolicy a-cfg -> Policy ns.b -> ConfigurationPolicy b-cfg -> " +
				"Policy ns.c -> ConfigurationPolicy c-cfg -> Policy ns.a",
			wantGets: []string{"ns.b", "ns.c"},
		},
		{
			name:  "a missing policy and an unknown template lead nowhere",
			start: "ns.a",
			policies: []*policyv1.Policy{
				replica("ns.a", deps(onPolicy("ns.gone", C)), config("a-cfg", onConfig("nobody-cfg", C))),
			},
			wantGets:  []string{"ns.gone"},
			wantLists: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			byName := map[string]*policyv1.Policy{}
			for _, p := range tc.policies {
				byName[p.Name] = p
			}
			var gets []string
			lists := 0
			from := ClusterPolicies{
				Get: func(name string) (*policyv1.Policy, error) {
					gets = append(gets, name)
					if p := byName[name]; p != nil {
						c := *p
						return &c, nil
					}
					return nil, nil
				},
				List: func() ([]policyv1.Policy, error) {
					lists++
					all := make([]policyv1.Policy, len(tc.policies))
					for i, p := range tc.policies {
						all[i] = *p
					}
					return all, nil
				},
			}
			start := byName[tc.start]
			got, err := CycleThrough(start, from)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("cycle\n got %q\nwant %q", got, tc.want)
			}
			if !slices.Equal(gets, tc.wantGets) {
				t.Errorf("read %v, want %v", gets, tc.wantGets)
			}
			if lists != tc.wantLists {
				t.Errorf("listed %d times, want %d", lists, tc.wantLists)
			}
			if start.Namespace != "cluster1" {
				t.Errorf("the policy's namespace became %q", start.Namespace)
			}
		})
	}
}

// TestCycleThroughReadErrors checks that a read that fails is the search's error.
func TestCycleThroughReadErrors(t *testing.T) {
	const C = policyv1.Compliant
	broken := errors.New("the cache is gone")
	p := policy("cluster1/ns.a", deps(onPolicy("ns.b", C)), config("a-cfg", onConfig("b-cfg", C)))
	for _, tc := range []struct {
		name string
		from ClusterPolicies
	}{
		{"get", ClusterPolicies{
			Get:  func(string) (*policyv1.Policy, error) { return nil, broken },
			List: func() ([]policyv1.Policy, error) { return nil, nil },
		}},
		{"list", ClusterPolicies{
			Get:  func(string) (*policyv1.Policy, error) { return nil, nil },
			List: func() ([]policyv1.Policy, error) { return nil, broken },
		}},
	} {
		if _, err := CycleThrough(p, tc.from); !errors.Is(err, broken) {
			t.Errorf("%s fails: got %v, want %v", tc.name, err, broken)
		}
	}
}

// TestCycleThroughRing checks the spoke's search on a ring of 10,000
// policies (a minute per search while the cycle search was quadratic): the
// cycle is found from any policy of the ring, starts there, and its path
// names MaxPathNodes objects and counts the 19,980 others.
func TestCycleThroughRing(t *testing.T) {
	const n = 10000
	byName := map[string]*policyv1.Policy{}
	for i := range n {
		name := fmt.Sprintf("ns.p%d", i)
		byName[name] = policy("cluster1/"+name, deps(onPolicy(fmt.Sprintf("ns.p%d", (i+1)%n), policyv1.Compliant)), config(fmt.Sprintf("p%d-cfg", i)))
	}
	from := ClusterPolicies{
		Get:  func(name string) (*policyv1.Policy, error) { return byName[name], nil },
		List: func() ([]policyv1.Policy, error) { return nil, errors.New("no list needed") },
	}
	got, err := CycleThrough(byName["ns.p5000"], from)
	if err != nil {
		t.Fatal(err)
	}
	want := "Policy ns.p5000 -> ConfigurationPolicy p5000-cfg -> Policy ns.p5001 -> ConfigurationPolicy p5001-cfg -> " +
		"Policy ns.p5002 -> ConfigurationPolicy p5002-cfg -> Policy ns.p5003 -> ConfigurationPolicy p5003-cfg -> " +
		"Policy ns.p5004 -> ConfigurationPolicy p5004-cfg -> Policy ns.p5005 -> ConfigurationPolicy p5005-cfg -> " +
		"Policy ns.p5006 -> ConfigurationPolicy p5006-cfg -> Policy ns.p5007 -> ConfigurationPolicy p5007-cfg -> " +
		"Policy ns.p5008 -> ConfigurationPolicy p5008-cfg -> Policy ns.p5009 -> ConfigurationPolicy p5009-cfg -> " +
		"... and 19,980 more -> Policy ns.p5000"
	if got != want {
		t.Errorf("cycle\n got %q\nwant %q", got, want)
	}
}
