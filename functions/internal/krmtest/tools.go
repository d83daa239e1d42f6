package krmtest

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RepoRoot returns the repository root: the nearest directory at or above the
// working directory that holds go.work.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work found above the working directory")
		}
		dir = parent
	}
}

// SkipUnderShort skips a test that builds binaries or runs kustomize or kpt
// when go test runs with -short (`make check`): BuildFunction, Kustomize and
// Kpt call it, so every test through the real tools is skipped there.
func SkipUnderShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped under -short (make check): builds binaries or runs kustomize or kpt")
	}
}

// BuildFunction builds the function functions/<name> into a temporary
// directory and returns the binary's path.
func BuildFunction(t testing.TB, name string) string {
	t.Helper()
	SkipUnderShort(t)
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./"+name)
	cmd.Dir = filepath.Join(RepoRoot(t), "functions")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./%s: %v\n%s", name, err, out)
	}
	return bin
}

// Kustomize returns the path of the repository's bin/kustomize (`make kustomize`
// builds it).
func Kustomize(t testing.TB) string {
	t.Helper()
	SkipUnderShort(t)
	path := filepath.Join(RepoRoot(t), "bin", "kustomize")
	if _, err := os.Stat(path); err != nil {
		missingTool(t, "kustomize", path+" is missing: run `make kustomize`")
	}
	return path
}

// Kpt returns the path of kpt on PATH.
func Kpt(t testing.TB) string {
	t.Helper()
	SkipUnderShort(t)
	path, err := exec.LookPath("kpt")
	if err != nil {
		missingTool(t, "kpt", "kpt is not on PATH: install kpt 1.0.0-beta.56 or later (see the README)")
	}
	return path
}

func missingTool(t testing.TB, tool, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("this test needs %s, which CI must provide: %s", tool, why)
		return
	}
	t.Skipf("skipped, this test needs %s: %s", tool, why)
}

// Output is what a tool printed, and its error (nil when it exited 0).
type Output struct {
	Stdout, Stderr string
	Err            error
}

// KustomizeBuild runs `kustomize build --enable-alpha-plugins --enable-exec dir`.
func KustomizeBuild(t testing.TB, kustomize, dir string) Output {
	t.Helper()
	return run(t, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
}

// KptRender runs `kpt fn render --allow-exec --truncate-output=false dir`,
// which rewrites the package in place.
func KptRender(t testing.TB, kpt, dir string) Output {
	t.Helper()
	return run(t, kpt, "fn", "render", "--allow-exec", "--truncate-output=false", dir)
}

// KptEval runs `kpt fn eval dir --exec binary --truncate-output=false`, with
// --fn-config config unless config is empty.
func KptEval(t testing.TB, kpt, dir, binary, config string) Output {
	t.Helper()
	args := []string{"fn", "eval", dir, "--exec", binary, "--truncate-output=false"}
	if config != "" {
		args = append(args, "--fn-config", config)
	}
	return run(t, kpt, args...)
}

func run(t testing.TB, tool string, args ...string) Output {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), tool, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("running %s: %v", tool, err)
	}
	return Output{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// WriteKustomization lays out a kustomization in a new temporary directory and
// returns it: resources.yaml holding items, and fn-config.yaml holding config
// with a config.kubernetes.io/function annotation that runs binary, listed
// under transformers. (kustomize's validators cannot run exec functions: it
// adds path annotations to their output and then finds the items modified,
// kubernetes-sigs/kustomize#5036.)
func WriteKustomization(t testing.TB, binary string, items, config []byte) string {
	t.Helper()
	dir := t.TempDir()
	fnConfig := annotated(t, config, "config.kubernetes.io/function", "exec:\n  path: "+binary+"\n")
	WriteFiles(t, dir, map[string][]byte{
		"kustomization.yaml": []byte("resources:\n- resources.yaml\ntransformers:\n- fn-config.yaml\n"),
		"resources.yaml":     items,
		"fn-config.yaml":     fnConfig,
	})
	return dir
}

// WritePlainKustomization lays out, in a new temporary directory that it
// returns, a kustomization of items alone, without a function: what a build
// through a function that changes nothing must equal.
func WritePlainKustomization(t testing.TB, items []byte) string {
	t.Helper()
	dir := t.TempDir()
	WriteFiles(t, dir, map[string][]byte{
		"kustomization.yaml": []byte("resources:\n- resources.yaml\n"),
		"resources.yaml":     items,
	})
	return dir
}

// WriteKptPackage lays out a kpt package in a new temporary directory and
// returns it: resources.yaml holding items, and a Kptfile whose pipeline runs
// binary as its only stage ("mutators" or "validators"). When config is not
// nil it is written to fn-config.yaml, marked local-config so that it is never
// applied, and named by the stage's configPath.
func WriteKptPackage(t testing.TB, binary string, items, config []byte, stage string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{"resources.yaml": items}
	fnStage := "  - exec: " + binary + "\n"
	if config != nil {
		files["fn-config.yaml"] = annotated(t, config, "config.kubernetes.io/local-config", "true")
		fnStage += "    configPath: fn-config.yaml\n"
	}
	files["Kptfile"] = []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + filepath.Base(dir) +
		"\npipeline:\n  " + stage + ":\n" + fnStage)
	WriteFiles(t, dir, files)
	return dir
}

// WriteEvalPackage lays out what `kpt fn eval` runs on: a package in a new
// temporary directory holding items in resources.yaml, which it returns, and,
// when config is not nil, config in a file outside it, whose path it returns
// ("" otherwise) for KptEval's --fn-config.
func WriteEvalPackage(t testing.TB, items, config []byte) (dir, configPath string) {
	t.Helper()
	dir = t.TempDir()
	WriteFiles(t, dir, map[string][]byte{"resources.yaml": items})
	if config != nil {
		configDir := t.TempDir()
		WriteFiles(t, configDir, map[string][]byte{"fn-config.yaml": config})
		configPath = filepath.Join(configDir, "fn-config.yaml")
	}
	return dir, configPath
}

// ReadDir returns the content of every file under dir, by slash-separated
// relative path.
func ReadDir(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// annotated returns the YAML object doc with one more annotation.
func annotated(t testing.TB, doc []byte, key, value string) []byte {
	t.Helper()
	node, err := yaml.Parse(string(doc))
	if err != nil {
		t.Fatalf("parsing function config: %v", err)
	}
	if err := node.PipeE(yaml.SetAnnotation(key, value)); err != nil {
		t.Fatal(err)
	}
	return []byte(node.MustString())
}

// WriteFiles writes files under dir, by slash-separated relative path,
// making the directories they need.
func WriteFiles(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
