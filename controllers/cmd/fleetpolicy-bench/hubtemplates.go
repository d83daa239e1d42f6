package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// templatesConfigMap is what the benchmarked hub templates read.
const templatesConfigMap = "bench-templates"

// templatedRootPolicy is rootPolicy with two hub templates per replica: the
// cluster's name and a ConfigMap value of the root's namespace.
func templatedRootPolicy(name, run string, version int) *policyv1.Policy {
	return rootPolicyWithData(name, run, fmt.Sprintf(
		`"cluster":"{{hub .ManagedClusterName hub}}","site":"{{hub fromConfigMap \"%s\" \"%s\" \"site\" hub}}","version":"%d"`,
		benchNamespace, templatesConfigMap, version))
}

// hubTemplates runs one root policy with two hub templates per replica on
// clusters clusters, and the same root untemplated (the floor), each through a
// fresh hub process, runs times: create and update times and the hub's CPU of
// the templated root against the untemplated one. Then the templated root
// once more beside hostile roots (hostileTemplates) that the hub meets first:
// its create time and the hub's peak RSS against the templated run alone.
func (b *bench) hubTemplates(ctx context.Context, clusters, runs int) error {
	if err := b.ensureClusters(ctx, clusters); err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: templatesConfigMap},
		Data: map[string]string{"site": "site-1"}}
	if err := b.admin.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sc := scenario{policies: 1, clusters: clusters}
	name := fmt.Sprintf("HubTemplates/clusters=%d", clusters)
	for r := range runs {
		progress("hub templates on %d clusters, run %d of %d: untemplated", clusters, r+1, runs)
		plain, err := b.hubPropagation(ctx, sc, fmt.Sprintf("t%d-%d-plain", clusters, r), rootPolicy, false)
		if err != nil {
			return fmt.Errorf("run %d, untemplated: %w", r+1, err)
		}
		progress("hub templates on %d clusters, run %d of %d: two hub templates per replica", clusters, r+1, runs)
		templated, err := b.hubPropagation(ctx, sc, fmt.Sprintf("t%d-%d-hub", clusters, r), templatedRootPolicy, false)
		if err != nil {
			return fmt.Errorf("run %d, templated: %w", r+1, err)
		}
		b.res.line(name+"/create", templated.create, withFloor(templated.create.Seconds(), plain.create.Seconds(), "s")...)
		b.res.line(name+"/update", templated.update, withFloor(templated.update.Seconds(), plain.update.Seconds(), "s")...)
		perThousand := float64(sc.replicas()) / 1000
		b.res.line(name+"/cpu", 0, withFloor(templated.cpu.Seconds()/perThousand, plain.cpu.Seconds()/perThousand, "cpu-s/1000-replicas")...)

		progress("hub templates on %d clusters, run %d of %d: beside %d hostile roots", clusters, r+1, runs, len(hostileTemplates))
		hostileRun := fmt.Sprintf("t%d-%d-hostile", clusters, r)
		if err := b.startHostile(ctx, hostileRun, clusters); err != nil {
			return fmt.Errorf("run %d, hostile roots: %w", r+1, err)
		}
		beside, err := b.hubPropagation(ctx, sc, fmt.Sprintf("t%d-%d-beside", clusters, r), templatedRootPolicy, false)
		if cerr := b.cleanup(ctx, hostileRun, clusters); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("run %d, beside hostile roots: %w", r+1, err)
		}
		b.res.line(name+"/hostile/create", beside.create, withFloor(beside.create.Seconds(), templated.create.Seconds(), "s")...)
		b.res.line(name+"/hostile/rss", 0, withFloor(mib(beside.rssBytes), mib(templated.rssBytes), "MiB-peak-rss")...)
	}
	return nil
}

// hostileTemplates are hub templates a tenant could write to stall or sink
// the hub: each loops about 10^10 times or makes gigabytes unless bounded.
var hostileTemplates = []string{
	`{{hub range 100000 hub}}{{hub range 100000 hub}}{{hub end hub}}{{hub end hub}}`,
	`{{hub range 100000 hub}}{{hub range 100000 hub}}{{hub end hub}}{{hub end hub}}`,
	`{{hub range 100000 hub}}{{hub range 100000 hub}}{{hub end hub}}{{hub end hub}}`,
	`{{hub range 100000 hub}}{{hub range 100000 hub}}{{hub end hub}}{{hub end hub}}`,
	`{{hub len (until 50000000) hub}}`,
	`{{hub $s := \"xx\" hub}}{{hub range until 40 hub}}{{hub $s = printf \"%s%s\" $s $s hub}}{{hub end hub}}{{hub len $s hub}}`,
	`{{hub $d := dict hub}}{{hub range until 60 hub}}{{hub $d = dict \"a\" $d \"b\" $d hub}}{{hub end hub}}{{hub $d hub}}`,
}

// startHostile creates, before the hub starts, one root per hostile template,
// bound to the first clusters clusters, as run: the hub meets them first, with
// every root worker.
func (b *bench) startHostile(ctx context.Context, run string, clusters int) error {
	if err := b.setupPlacement(ctx, run, b.decisionsOver(clusters), false); err != nil {
		return err
	}
	names := rootNames(run, len(hostileTemplates))
	for i, name := range names {
		if err := b.admin.Create(ctx, rootPolicyWithData(name, run, `"v":"`+hostileTemplates[i]+`"`)); err != nil {
			return err
		}
	}
	return b.bindRoots(ctx, run, names)
}
