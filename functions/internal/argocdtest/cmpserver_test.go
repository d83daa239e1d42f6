package argocdtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// What the repo server tells the plugin about the destination cluster, and the
// commit it renders.
const (
	kubeVersion = "1.35.4"
	revision    = "4f1c2e0d9b8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d"
)

var kubeAPIVersions = []string{"v1", "apps/v1", "cluster.open-cluster-management.io/v1beta1", "policy.open-cluster-management.io/v1"}

// command is a plugin command: command[0] is exec'd with command[1:] and args.
type command struct {
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
}

// announcement is a static parameter announcement.
type announcement struct {
	Name           string            `yaml:"name"`
	Title          string            `yaml:"title"`
	Tooltip        string            `yaml:"tooltip"`
	Required       bool              `yaml:"required"`
	ItemType       string            `yaml:"itemType"`
	CollectionType string            `yaml:"collectionType"`
	String         *string           `yaml:"string"`
	Array          []string          `yaml:"array"`
	Map            map[string]string `yaml:"map"`
}

// pluginConfig is plugin.yaml, with the fields of Argo CD's PluginConfig.
type pluginConfig struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Version  string  `yaml:"version"`
		Init     command `yaml:"init"`
		Generate command `yaml:"generate"`
		Discover struct {
			FileName string `yaml:"fileName"`
			Find     struct {
				command `yaml:",inline"`
				Glob    string `yaml:"glob"`
			} `yaml:"find"`
		} `yaml:"discover"`
		Parameters struct {
			Static  []announcement `yaml:"static"`
			Dynamic command        `yaml:"dynamic"`
		} `yaml:"parameters"`
		PreserveFileMode bool `yaml:"preserveFileMode"`
		ProvideGitCreds  bool `yaml:"provideGitCreds"`
	} `yaml:"spec"`
}

// loadPlugin reads plugin.yaml strictly and fails the test unless Argo CD
// would accept it (cmpserver ValidatePluginConfig).
func loadPlugin(t *testing.T, path string) pluginConfig {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var p pluginConfig
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	switch {
	case p.Metadata.Name == "":
		t.Fatalf("%s: metadata.name is empty", path)
	case p.Kind != "ConfigManagementPlugin":
		t.Fatalf("%s: kind is %q, want ConfigManagementPlugin", path, p.Kind)
	case len(p.Spec.Generate.Command) == 0:
		t.Fatalf("%s: spec.generate.command is empty", path)
	}
	return p
}

// fullName is the name an Application gives the plugin: <name>-<version>, or
// <name> without a version.
func (p pluginConfig) fullName() string {
	if p.Spec.Version == "" {
		return p.Metadata.Name
	}
	return p.Metadata.Name + "-" + p.Spec.Version
}

// parameter is an Application's plugin parameter.
type parameter struct {
	Name   string            `yaml:"name"`
	String *string           `yaml:"string"`
	Array  []string          `yaml:"array"`
	Map    map[string]string `yaml:"map"`
}

// envVar is an Application's plugin env entry.
type envVar struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// application holds the fields of an Argo CD Application that shape a
// manifest request.
type application struct {
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Project string `yaml:"project"`
		Source  struct {
			RepoURL        string `yaml:"repoURL"`
			TargetRevision string `yaml:"targetRevision"`
			Path           string `yaml:"path"`
			Plugin         *struct {
				Name       string      `yaml:"name"`
				Env        []envVar    `yaml:"env"`
				Parameters []parameter `yaml:"parameters"`
			} `yaml:"plugin"`
		} `yaml:"source"`
		Destination struct {
			Namespace string `yaml:"namespace"`
		} `yaml:"destination"`
	} `yaml:"spec"`
}

func loadApplication(t *testing.T, path string) application {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var app application
	if err := yaml.Unmarshal(b, &app); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if app.Spec.Source.Plugin == nil {
		t.Fatalf("%s: spec.source.plugin is not set, so Argo CD would not use a plugin", path)
	}
	return app
}

// requestEnv is the environment the repo server sends with a manifest request
// for app: the build variables, the cluster's versions, the plugin env
// prefixed ARGOCD_ENV_ and interpolated, then the parameters.
func requestEnv(t *testing.T, app application) []string {
	t.Helper()
	src := app.Spec.Source
	build := []string{
		"ARGOCD_APP_NAME=" + app.Metadata.Name,
		"ARGOCD_APP_NAMESPACE=" + app.Spec.Destination.Namespace,
		"ARGOCD_APP_PROJECT_NAME=" + app.Spec.Project,
		"ARGOCD_APP_REVISION=" + revision,
		"ARGOCD_APP_REVISION_SHORT=" + revision[:7],
		"ARGOCD_APP_REVISION_SHORT_8=" + revision[:8],
		"ARGOCD_APP_SOURCE_REPO_URL=" + src.RepoURL,
		"ARGOCD_APP_SOURCE_PATH=" + src.Path,
		"ARGOCD_APP_SOURCE_TARGET_REVISION=" + src.TargetRevision,
		"KUBE_VERSION=" + kubeVersion,
		"KUBE_API_VERSIONS=" + strings.Join(kubeAPIVersions, ","),
	}
	env := append([]string(nil), build...)
	for _, e := range src.Plugin.Env {
		env = append(env, "ARGOCD_ENV_"+e.Name+"="+envsubst(e.Value, build))
	}
	params, err := parameterEnv(src.Plugin.Parameters)
	if err != nil {
		t.Fatal(err)
	}
	return append(env, params...)
}

// envsubst expands $VAR and ${VAR} in s from env; an unknown variable expands
// to nothing and $$ to $.
func envsubst(s string, env []string) string {
	values := map[string]string{}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		values[name] = value
	}
	return os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		return values[name]
	})
}

var notParamNameChar = regexp.MustCompile("[^A-Z0-9_]")

// paramEnvName upper-cases name and turns every character outside [A-Z0-9_]
// into _.
func paramEnvName(name string) string {
	return notParamNameChar.ReplaceAllString(strings.ToUpper(name), "_")
}

// parameterEnv is ARGOCD_APP_PARAMETERS, the parameters as JSON, followed by
// PARAM_<NAME> for a string, PARAM_<NAME>_<i> for each array item and
// PARAM_<NAME>_<KEY> for each map entry.
func parameterEnv(params []parameter) ([]string, error) {
	wire := make([]map[string]any, 0, len(params))
	for _, p := range params {
		w := map[string]any{"name": p.Name}
		if p.String != nil {
			w["string"] = *p.String
		}
		if p.Array != nil {
			w["array"] = p.Array
		}
		if p.Map != nil {
			w["map"] = p.Map
		}
		wire = append(wire, w)
	}
	b, err := json.Marshal(wire)
	if err != nil {
		return nil, fmt.Errorf("marshalling plugin parameters: %w", err)
	}
	env := []string{"ARGOCD_APP_PARAMETERS=" + string(b)}
	for _, p := range params {
		base := "PARAM_" + paramEnvName(p.Name)
		if p.String != nil {
			env = append(env, base+"="+*p.String)
		}
		for key, value := range p.Map {
			env = append(env, base+"_"+paramEnvName(key)+"="+value)
		}
		for i, value := range p.Array {
			env = append(env, fmt.Sprintf("%s_%d=%s", base, i, value))
		}
	}
	return env, nil
}

// copyRepo copies the tree src into dst as the sidecar receives a repository:
// directories 0755 and regular files 0644, unless preserveFileMode keeps the
// modes. Anything else (a symlink, a device) fails the test: the examples
// hold none.
func copyRepo(t *testing.T, src, dst string, preserveFileMode bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		dirMode, fileMode := os.FileMode(0o755), os.FileMode(0o644)
		if preserveFileMode {
			dirMode, fileMode = info.Mode().Perm(), info.Mode().Perm()
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, dirMode)
		case d.Type().IsRegular():
			return copyFile(path, target, fileMode)
		default:
			return fmt.Errorf("%s: %v is not a regular file or a directory", path, d.Type())
		}
	})
	if err != nil {
		t.Fatalf("copying the repository: %v", err)
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// result is what a plugin command printed, and its error (nil when it exited 0).
type result struct {
	Stdout, Stderr string
	Err            error
}

// sidecar runs a plugin's commands as argocd-cmp-server does in the sidecar
// container whose environment is env.
type sidecar struct {
	plugin pluginConfig
	env    []string
}

// newSidecar is the sidecar of the sidecar image (hack/imagebuild): on its
// PATH, the KRM functions and fleetpolicy-cmp-generate in one directory, and
// kustomize; nothing else, no shell and no shell tool, as in the image.
func newSidecar(t *testing.T, plugin pluginConfig) sidecar {
	t.Helper()
	kustomize := krmtest.Kustomize(t)
	bin := functionBinaries(t)
	tools := t.TempDir()
	if err := os.Symlink(kustomize, filepath.Join(tools, "kustomize")); err != nil {
		t.Fatal(err)
	}
	return sidecar{plugin: plugin, env: []string{
		"PATH=" + bin + string(filepath.ListSeparator) + tools,
		"HOME=" + t.TempDir(),
	}}
}

// withMachineTools is s with the machine's programs names added at the end of
// its PATH: a sidecar built on a base that has them.
func (s sidecar) withMachineTools(t *testing.T, names ...string) sidecar {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		path, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.Symlink(path, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	env := slices.Clone(s.env)
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + v + string(filepath.ListSeparator) + dir
		}
	}
	s.env = env
	return s
}

// lookPath finds name as argocd-cmp-server's exec does: on the sidecar's PATH.
func (s sidecar) lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	var pathEnv string
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		path := filepath.Join(dir, name)
		if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return path, nil
		}
	}
	return "", fmt.Errorf("%s: not found on the sidecar's PATH %s", name, pathEnv)
}

// run runs c in dir with the sidecar's environment followed by requestEnv.
func (s sidecar) run(t *testing.T, c command, dir string, requestEnv []string) result {
	t.Helper()
	if len(c.Command) == 0 {
		t.Fatal("the command is empty")
	}
	path, err := s.lookPath(c.Command[0])
	if err != nil {
		return result{Err: err}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), path, append(c.Command[1:], c.Args...)...)
	cmd.Args[0] = c.Command[0]
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), s.env...), requestEnv...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("running %v: %v", c.Command, err)
	}
	return result{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// generate answers a manifest request for the app at appDir: init, then
// generate when init succeeded. The result is generate's, or init's when init
// failed.
func (s sidecar) generate(t *testing.T, appDir string, requestEnv []string) result {
	t.Helper()
	if len(s.plugin.Spec.Init.Command) > 0 {
		if r := s.run(t, s.plugin.Spec.Init, appDir, requestEnv); r.Err != nil {
			return r
		}
	}
	return s.run(t, s.plugin.Spec.Generate, appDir, requestEnv)
}

// matches tells whether the plugin's discovery rule selects the app at
// appDir: the find command exits 0 and prints something. (This emulator
// implements discovery by find command only, the rule the plugin uses.)
func (s sidecar) matches(t *testing.T, appDir string, requestEnv []string) bool {
	t.Helper()
	d := s.plugin.Spec.Discover
	if d.FileName != "" || d.Find.Glob != "" || len(d.Find.Command) == 0 {
		t.Fatal("the emulator implements discovery by find command only")
	}
	r := s.run(t, d.Find.command, appDir, requestEnv)
	return r.Err == nil && strings.TrimSuffix(r.Stdout, "\n") != ""
}

// manifests splits generate's stdout into objects as the cmp server does,
// failing the test on a document that is not a Kubernetes object.
func manifests(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(stdout))
	var objs []map[string]any
	for i := 0; ; i++ {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("stdout document %d is not YAML: %v\nstdout:\n%s", i, err, stdout)
		}
		if obj == nil {
			continue
		}
		if obj["apiVersion"] == nil || obj["kind"] == nil || krmtest.Field(obj, "metadata", "name") == nil {
			t.Fatalf("stdout document %d is not a Kubernetes object (apiVersion, kind, metadata.name): %v", i, obj)
		}
		objs = append(objs, obj)
	}
}

// generateCommand is the plugin's generate command, relative to functions/;
// the sidecar image installs it beside the functions.
const generateCommand = "cmd/fleetpolicy-cmp-generate"

// functionBinaries builds every KRM function of functions/ and the plugin's
// generate command once per test binary into a shared directory and returns
// it.
func functionBinaries(t *testing.T) string {
	krmtest.SkipUnderShort(t)
	t.Helper()
	built.Do(func() {
		built.dir, built.err = buildFunctions(krmtest.RepoRoot(t))
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir
}

var built struct {
	sync.Once
	dir string
	err error
}

func buildFunctions(root string) (string, error) {
	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		return "", fmt.Errorf("no functions/*/main.go under %s (%v)", root, err)
	}
	dir, err := os.MkdirTemp("", "argocdtest-bin-")
	if err != nil {
		return "", err
	}
	args := []string{"build", "-o", dir + string(filepath.Separator), "./" + generateCommand}
	for _, m := range mains {
		args = append(args, "./"+filepath.Base(filepath.Dir(m)))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(root, "functions")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return dir, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
