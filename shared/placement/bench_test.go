package placement

import (
	"context"
	"fmt"
	"maps"
	"strconv"
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
// the EU/PCI example policy (examples/placement) over 1,000 clusters: Evaluate per request (what
// the webhook does), and Explain (the dry run). A request that the policy does
// not concern (no EU jurisdiction asked) is the floor. Each request is a
// resource of its own (an annotation that differs per request, copying it
// costs about a microsecond), which the Rego engine evaluates; "repeated" asks
// about the same resource every time, which the Rego engine answers from its
// memo.
func BenchmarkAdmission(b *testing.B) {
	ctx := context.Background()
	apps := exampleResources(b)
	for _, file := range []string{"policy-rego.yaml", "policy-cel.yaml"} {
		e := loaded(b, benchFleet(1000), exampleConfigMap(b, file))
		for _, tc := range []struct {
			name     string
			resource string
			explain  bool
			repeated bool
		}{
			{"evaluate/eu-pci", "Policy/payments", false, false},
			{"evaluate/eu-pci/repeated", "Policy/payments", false, true},
			{"evaluate/unconcerned", "Policy/monitoring", false, false},
			{"explain/eu-pci", "Policy/payments", true, false},
		} {
			b.Run(fmt.Sprintf("%s/1000-clusters/%s", file[len("policy-"):len(file)-len(".yaml")], tc.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					obj := apps[tc.resource]
					if !tc.repeated {
						obj = withAnnotation(obj, "bench.fleetpolicy.io/request", strconv.Itoa(i))
					}
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

// withAnnotation is a copy of obj, its metadata and annotations copied too,
// with one more annotation.
func withAnnotation(obj map[string]any, key, value string) map[string]any {
	out := maps.Clone(obj)
	md := maps.Clone(obj["metadata"].(map[string]any))
	annotations, _ := md["annotations"].(map[string]any)
	annotations = maps.Clone(annotations)
	if annotations == nil {
		annotations = map[string]any{}
	}
	annotations[key] = value
	md["annotations"], out["metadata"] = annotations, md
	return out
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
