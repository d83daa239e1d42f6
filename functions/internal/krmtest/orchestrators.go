package krmtest

import (
	"reflect"
	"testing"
)

// Orchestrators checks a function's golden cases (testdata/) through the real
// orchestrators, in the way kyaml's frameworktestutil checks a function's
// cases in process: `kustomize build` with the function as an exec
// transformer, `kpt fn render` with the function in a Kptfile pipeline, and
// `kpt fn eval --exec`. For every case and orchestrator:
//
//   - the run fails exactly when expected.yaml holds an error result, and it
//     shows each expected error message (CheckRun);
//   - a successful kustomize build is what Build accepts;
//   - a failed kpt run leaves the package byte for byte as it was; a
//     successful one leaves what Package accepts, and a second run on the
//     result fails or passes as the first did (CheckRun again) and changes
//     nothing.
type Orchestrators struct {
	// Function is the function's directory under functions/; its binary is
	// built once for every case.
	Function string
	// DefaultConfig is the functionConfig kustomize gets for a case without
	// config.yaml: kustomize needs an object to carry the function annotation.
	DefaultConfig []byte
	// Config, when not nil, is the functionConfig the orchestrators get
	// instead of the case's config.yaml (nil when the function gets none), for
	// a config that names files relative to the function's directory, say.
	Config func(t testing.TB, c Case) []byte
	// Build checks a successful kustomize build; nil is BuildUnchanged.
	Build func(t testing.TB, k KustomizeRun, c Case, stdout string)
	// KustomizeRefuses names the cases whose items kustomize refuses before
	// any function runs (two objects with one id, say): their build without
	// the function must fail, and so must the build with it. A plain build
	// that fails for any other case fails the test.
	KustomizeRefuses []string
	// RenderStages are the Kptfile pipeline stages the function is run in by
	// kpt fn render, one package per stage; nil is "mutators".
	RenderStages []string
	// Package checks a kpt package after a successful run, given its files
	// before and after it; nil is Unchanged.
	Package func(t testing.TB, c Case, before, after map[string]string)
}

// KustomizeRun is what a Build check may run again: the kustomize binary, the
// function's binary and the case's functionConfig as kustomize got it.
type KustomizeRun struct {
	Kustomize, Binary string
	Config            []byte
}

// PlainBuild is kustomize's build of items without any function; the test
// fails when that build fails.
func (k KustomizeRun) PlainBuild(t testing.TB, items []byte) string {
	t.Helper()
	out := KustomizeBuild(t, k.Kustomize, WritePlainKustomization(t, items))
	if out.Err != nil {
		t.Fatalf("plain build: %v\n%s", out.Err, out.Stderr)
	}
	return out.Stdout
}

// Build is kustomize's build of items through the function; the test fails
// when that build fails.
func (k KustomizeRun) Build(t testing.TB, items []byte) string {
	t.Helper()
	out := KustomizeBuild(t, k.Kustomize, WriteKustomization(t, k.Binary, items, k.Config))
	if out.Err != nil {
		t.Fatalf("build through the function: %v\n%s", out.Err, out.Stderr)
	}
	return out.Stdout
}

// BuildUnchanged is the Build check of a function whose build changes
// nothing kustomize emits (a validator, or a function whose output is
// local-config): the build equals the build without the function.
func BuildUnchanged(t testing.TB, k KustomizeRun, c Case, stdout string) {
	t.Helper()
	if want := k.PlainBuild(t, c.Items); stdout != want {
		t.Errorf("the function changed the build:\n--- got\n%s\n--- want\n%s", stdout, want)
	}
}

// Unchanged is the Package check of a function that changes nothing in a
// package: every file is left byte for byte, comments included.
func Unchanged(t testing.TB, _ Case, before, after map[string]string) {
	t.Helper()
	if !reflect.DeepEqual(after, before) {
		t.Errorf("the function changed the package:\n--- got\n%v\n--- want\n%v", after, before)
	}
}

// Run builds the function and runs every golden case under testdata through
// kustomize, kpt fn render (each of RenderStages) and kpt fn eval, a subtest
// each: "kustomize/<case>", "kpt-render/<stage>/<case>", "kpt-eval/<case>".
func (o Orchestrators) Run(t *testing.T) {
	t.Helper()
	bin := BuildFunction(t, o.Function)
	cases := Cases(t, "testdata")
	t.Run("kustomize", func(t *testing.T) {
		kustomize := Kustomize(t)
		for _, c := range cases {
			t.Run(c.Name, func(t *testing.T) { o.kustomize(t, kustomize, bin, c) })
		}
	})
	t.Run("kpt-render", func(t *testing.T) {
		kpt := Kpt(t)
		stages := o.RenderStages
		if stages == nil {
			stages = []string{"mutators"}
		}
		for _, stage := range stages {
			for _, c := range cases {
				t.Run(stage+"/"+c.Name, func(t *testing.T) {
					pkg := WriteKptPackage(t, bin, c.Items, o.config(t, c), stage)
					o.twice(t, c, pkg, func() Output { return KptRender(t, kpt, pkg) })
				})
			}
		}
	})
	t.Run("kpt-eval", func(t *testing.T) {
		kpt := Kpt(t)
		for _, c := range cases {
			t.Run(c.Name, func(t *testing.T) {
				pkg, config := WriteEvalPackage(t, c.Items, o.config(t, c))
				o.twice(t, c, pkg, func() Output { return KptEval(t, kpt, pkg, bin, config) })
			})
		}
	})
}

// config is the functionConfig the orchestrators get for c; nil for none.
func (o Orchestrators) config(t testing.TB, c Case) []byte {
	t.Helper()
	if o.Config != nil {
		return o.Config(t, c)
	}
	return c.Config
}

func (o Orchestrators) kustomize(t *testing.T, kustomize, bin string, c Case) {
	t.Helper()
	k := KustomizeRun{Kustomize: kustomize, Binary: bin, Config: o.config(t, c)}
	if k.Config == nil {
		k.Config = o.DefaultConfig
	}
	out := KustomizeBuild(t, kustomize, WriteKustomization(t, bin, c.Items, k.Config))
	for _, name := range o.KustomizeRefuses {
		if name != c.Name {
			continue
		}
		if plain := KustomizeBuild(t, kustomize, WritePlainKustomization(t, c.Items)); plain.Err == nil {
			t.Fatal("kustomize builds the items without the function: the case is not one it refuses")
		}
		if out.Err == nil {
			t.Fatalf("kustomize refuses the items without the function but not with it:\n%s", out.Stdout)
		}
		return
	}
	CheckRun(t, c, out)
	if out.Err != nil {
		return
	}
	build := o.Build
	if build == nil {
		build = BuildUnchanged
	}
	build(t, k, c, out.Stdout)
}

// twice runs a kpt command on pkg, checks the package, and runs it again.
func (o Orchestrators) twice(t *testing.T, c Case, pkg string, run func() Output) {
	t.Helper()
	before := ReadDir(t, pkg)
	out := run()
	CheckRun(t, c, out)
	after := ReadDir(t, pkg)
	if out.Err != nil {
		if !reflect.DeepEqual(after, before) {
			t.Errorf("a failed run changed the package:\n--- got\n%v\n--- want\n%v", after, before)
		}
		return
	}
	check := o.Package
	if check == nil {
		check = Unchanged
	}
	check(t, c, before, after)
	CheckRun(t, c, run())
	if again := ReadDir(t, pkg); !reflect.DeepEqual(again, after) {
		t.Errorf("the second run changed the package:\n--- got\n%v\n--- want\n%v", again, after)
	}
}
