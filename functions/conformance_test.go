package functions_test

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
	fleetv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
)

// conformanceItems is the conformance corpus and the hub inventory it is
// placed on, as one multi-document stream.
func conformanceItems(t *testing.T, root string) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, dir := range []string{"conformance/hub", "conformance/corpus"} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out.WriteString("---\n")
			out.Write(raw)
		}
	}
	return out.Bytes()
}

// TestConformanceCorpusThroughEveryFunction runs every catalogued function,
// with a functionConfig of its kind and no options, over the conformance
// corpus (manifests as users of a real OCM hub write them) and its hub
// inventory: none may report an error or change an item, under kustomize the
// build equals the build without the function, and plan-rollout's plans reach
// exactly the clusters, with exactly the remediationActions, that the hub's
// replicas do (conformance/expected-replicas.yaml, which
// controllers/internal/conformancetest checks live).
func TestConformanceCorpusThroughEveryFunction(t *testing.T) {
	root, cat := readCatalog(t)
	items := conformanceItems(t, root)
	kustomize := krmtest.Kustomize(t)
	plain := krmtest.KustomizeBuild(t, kustomize, krmtest.WritePlainKustomization(t, items))
	if plain.Err != nil {
		t.Fatalf("kustomize build of the corpus: %v\n%s", plain.Err, plain.Stderr)
	}
	for _, f := range cat.Functions {
		binary := krmtest.BuildFunction(t, f.Name)
		config := []byte("apiVersion: " + f.FunctionConfig.APIVersion + "\nkind: " + f.FunctionConfig.Kind + "\nmetadata:\n  name: conformance\n")
		t.Run(f.Name, func(t *testing.T) {
			in, out := runOnItems(t, binary, items, config)
			for _, r := range out.Results {
				if r.Severity == fn.Error {
					t.Errorf("error result: %s", r)
				}
			}
			for i, item := range in.Items {
				if got, want := out.Items[i].String(), item.String(); got != want {
					t.Errorf("item %s %s/%s changed:\n--- got\n%s\n--- want\n%s", item.GetKind(), item.GetNamespace(), item.GetName(), got, want)
				}
			}
			if f.Name == "plan-rollout" {
				checkPlans(t, root, out.Items[len(in.Items):])
			}
			built := krmtest.KustomizeBuild(t, kustomize, krmtest.WriteKustomization(t, binary, items, config))
			if built.Err != nil {
				t.Fatalf("kustomize build through %s: %v\n%s", f.Name, built.Err, built.Stderr)
			}
			if built.Stdout != plain.Stdout {
				t.Errorf("kustomize build through %s differs from the build without it:\n%s", f.Name, built.Stdout)
			}
		})
	}
}

// runOnItems runs a function binary on a ResourceList of items and config,
// and returns the input and output lists; it fails unless the function exits 0.
func runOnItems(t *testing.T, binary string, items, config []byte) (in, out *fn.ResourceList) {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(items), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	fnConfig, err := kyaml.Parse(string(config))
	if err != nil {
		t.Fatal(err)
	}
	var list bytes.Buffer
	if err := (kio.ByteWriter{Writer: &list, WrappingKind: kio.ResourceListKind,
		WrappingAPIVersion: kio.ResourceListAPIVersion, FunctionConfig: fnConfig}).Write(nodes); err != nil {
		t.Fatal(err)
	}
	in, err = fn.ParseResourceList(list.Bytes())
	if err != nil {
		t.Fatalf("the corpus as a ResourceList: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), binary)
	cmd.Stdin = bytes.NewReader(list.Bytes())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v:\n%s", err, stderr.String())
	}
	out, err = fn.ParseResourceList(stdout.Bytes())
	if err != nil {
		t.Fatalf("output is not a ResourceList: %v\n%s", err, stdout.String())
	}
	if len(out.Items) < len(in.Items) {
		t.Fatalf("%d items out, %d in", len(out.Items), len(in.Items))
	}
	return in, out
}

// checkPlans compares the RolloutPlans plan-rollout wrote with
// conformance/expected-replicas.yaml.
func checkPlans(t *testing.T, root string, added []*fn.KubeObject) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "conformance", "expected-replicas.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{}
	if err := yaml.UnmarshalStrict(raw, &want); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, item := range added {
		if item.GetKind() != fleetv1alpha1.RolloutPlanKind {
			continue
		}
		var plan fleetv1alpha1.RolloutPlan
		if err := yaml.Unmarshal([]byte(item.String()), &plan); err != nil {
			t.Fatal(err)
		}
		clusters := map[string]string{}
		for _, c := range plan.Spec.Clusters {
			clusters[c.Name] = strings.ToLower(string(c.RemediationAction))
		}
		got[plan.Spec.PolicyRef.Namespace+"/"+plan.Spec.PolicyRef.Name] = clusters
	}
	for _, policy := range slices.Sorted(maps.Keys(want)) {
		if !maps.Equal(got[policy], want[policy]) {
			t.Errorf("RolloutPlan of %s: clusters %v, want %v (as the hub replicates)", policy, got[policy], want[policy])
		}
	}
	for policy := range got {
		if _, ok := want[policy]; !ok {
			t.Errorf("RolloutPlan of %s, which the corpus does not plan", policy)
		}
	}
}
