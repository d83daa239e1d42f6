package testkit

import (
	"testing"
	"time"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// CounterSum is the sum of the counter series named name in the in-process
// controllers' metrics registry (controller-runtime's) whose labels include
// every label of labels (nil: every series); 0 when there is none.
func CounterSum(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			total += m.GetCounter().GetValue()
		}
	}
	return total
}

// SettledCounterSum waits until CounterSum(name, labels) has not moved for a
// second and returns it then; it fails t when the counter is still moving
// after 30 s. Tests that share an API server start a new controller over what
// an earlier test left undone: a test that counts its own writes counts from
// here.
func SettledCounterSum(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := CounterSum(t, name, labels)
	for quietSince := time.Now(); time.Since(quietSince) < time.Second; {
		if time.Now().After(deadline) {
			t.Fatalf("%s still moving after 30s (%v so far)", name, last)
		}
		time.Sleep(100 * time.Millisecond)
		if now := CounterSum(t, name, labels); now != last {
			last, quietSince = now, time.Now()
		}
	}
	return last
}
