package placement

import (
	"context"
	"fmt"
	"testing"
)

// benchFleet is an inventory of n clusters: a third in the EU, PCI levels 0-3.
func benchFleet(n int) []Cluster {
	clusters := make([]Cluster, n)
	jurisdictions := []string{"eu", "us", "ap"}
	for i := range clusters {
		clusters[i] = Cluster{
			Name:   fmt.Sprintf("cluster-%04d", i),
			Labels: map[string]string{"jurisdiction": jurisdictions[i%3], "name": fmt.Sprintf("cluster-%04d", i)},
			Claims: map[string]string{"pci-compliance-level": fmt.Sprint(i % 4)},
		}
	}
	return clusters
}

// BenchmarkAdmission is the placement decision of one admission request with
// the seed's example policy over 1,000 clusters: Evaluate per request (what
// the webhook does), and Explain (the dry run). A request that the policy does
// not concern (no EU jurisdiction asked) is the floor.
func BenchmarkAdmission(b *testing.B) {
	ctx := context.Background()
	apps := exampleResources(b)
	for _, file := range []string{"policy-rego.yaml", "policy-cel.yaml"} {
		e := loaded(b, benchFleet(1000), exampleConfigMap(b, file))
		for _, tc := range []struct {
			name     string
			resource string
			explain  bool
		}{
			{"evaluate/eu-pci", "Policy/payments", false},
			{"evaluate/unconcerned", "Policy/monitoring", false},
			{"explain/eu-pci", "Policy/payments", true},
		} {
			obj := apps[tc.resource]
			b.Run(fmt.Sprintf("%s/1000-clusters/%s", file[len("policy-"):len(file)-len(".yaml")], tc.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					var err error
					if tc.explain {
						_, err = e.Explain(ctx, obj)
					} else {
						_, err = e.Evaluate(ctx, obj)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkInventoryUpdate is one cluster relabelled in an inventory of 1,000
// clusters, both engines updated.
func BenchmarkInventoryUpdate(b *testing.B) {
	ctx := context.Background()
	e := loaded(b, benchFleet(1000), exampleConfigMap(b, "policy-rego.yaml"), exampleConfigMap(b, "policy-cel.yaml"))
	c := benchFleet(1)[0]
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Labels = map[string]string{"jurisdiction": []string{"eu", "us"}[i%2]}
		if err := e.PutCluster(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}
