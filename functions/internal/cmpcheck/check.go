package cmpcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kustomizationFileNames are the names kustomize looks for, in its order.
var kustomizationFileNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// Refusal is why Check refuses an app: File is the file that names the
// refused thing.
type Refusal struct {
	File   string
	Reason string
}

func (r *Refusal) Error() string { return r.File + ": " + r.Reason }

// kustomization holds the fields of a Kustomization that reach other
// kustomizations or KRM function configs.
type kustomization struct {
	Resources    []string `yaml:"resources"`
	Components   []string `yaml:"components"`
	Bases        []string `yaml:"bases"`
	Transformers []string `yaml:"transformers"`
	Generators   []string `yaml:"generators"`
	Validators   []string `yaml:"validators"`
}

// checker holds one Check's state.
type checker struct {
	allowed []string        // real absolute paths
	seen    map[string]bool // real paths of kustomization directories walked
}

// Check returns nil when every KRM function that `kustomize build appDir`
// would run is an exec function whose path resolves to one of allowed
// (absolute paths of the binaries the plugin may run), and a *Refusal
// otherwise. A bare exec path is looked up on the PATH of this process, which
// kustomize, run next with the same environment, also uses.
func Check(appDir string, allowed []string) error {
	c := checker{seen: map[string]bool{}}
	for _, a := range allowed {
		real, err := filepath.EvalSymlinks(a)
		if err != nil {
			return fmt.Errorf("allowed function %s: %w", a, err)
		}
		c.allowed = append(c.allowed, real)
	}
	dir, err := filepath.Abs(appDir)
	if err != nil {
		return err
	}
	return c.walk(dir)
}

// walk checks the kustomization in dir and what it reaches. A directory
// without a kustomization holds nothing kustomize runs.
func (c *checker) walk(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if c.seen[real] {
		return nil
	}
	c.seen[real] = true
	file, k, err := readKustomization(dir)
	if err != nil || file == "" {
		return err
	}
	for _, entry := range slices.Concat(k.Resources, k.Components, k.Bases) {
		path, info, err := local(dir, entry)
		if err != nil {
			return &Refusal{File: file, Reason: err.Error()}
		}
		if info.IsDir() {
			if err := c.walk(path); err != nil {
				return err
			}
		}
	}
	for _, list := range []struct {
		field   string
		entries []string
	}{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}} {
		for _, entry := range list.entries {
			if err := c.checkPluginEntry(dir, file, list.field, entry); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPluginEntry checks one entry of transformers, generators or
// validators of the kustomization file in dir: inline YAML or a local file.
func (c *checker) checkPluginEntry(dir, file, field, entry string) error {
	if strings.Contains(entry, "\n") {
		return c.checkConfigs(dir, file+" ("+field+", inline)", []byte(entry))
	}
	path, info, err := local(dir, entry)
	if err != nil {
		return &Refusal{File: file, Reason: field + ": " + err.Error()}
	}
	if info.IsDir() {
		return &Refusal{File: file, Reason: fmt.Sprintf("%s: %q is a directory; the plugin accepts only function config files, whose functions it can check", field, entry)}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return c.checkConfigs(dir, path, b)
}

// checkConfigs checks the function configs in b, read from name and listed
// by the kustomization in dir.
func (c *checker) checkConfigs(dir, name string, b []byte) error {
	nodes, err := kio.FromBytes(b)
	if err != nil {
		return &Refusal{File: name, Reason: "not YAML: " + err.Error()}
	}
	for _, n := range nodes {
		spec, err := runtimeutil.GetFunctionSpec(n)
		if err != nil {
			return &Refusal{File: name, Reason: err.Error()}
		}
		if spec == nil {
			continue // a builtin or legacy plugin from the sidecar's plugin home
		}
		if err := c.checkSpec(dir, spec); err != nil {
			return &Refusal{File: name, Reason: fmt.Sprintf("%s %s: %v", n.GetKind(), n.GetName(), err)}
		}
	}
	return nil
}

func (c *checker) checkSpec(dir string, spec *runtimeutil.FunctionSpec) error {
	switch {
	case spec.Container.Image != "":
		return fmt.Errorf("container function %q refused: the plugin runs only fleetpolicy's exec functions", spec.Container.Image)
	case spec.Exec.Path == "":
		return errors.New("function without an exec path refused: the plugin runs only fleetpolicy's exec functions")
	case len(spec.Exec.Env) > 0:
		return fmt.Errorf("exec path %q: envs %q refused: the plugin sets no environment for a function", spec.Exec.Path, spec.Exec.Env)
	}
	real, err := resolve(dir, spec.Exec.Path)
	if err != nil {
		return fmt.Errorf("exec path %q refused: %w", spec.Exec.Path, err)
	}
	if !slices.Contains(c.allowed, real) {
		return fmt.Errorf("exec path %q (%s) refused: the plugin runs only fleetpolicy's functions %s", spec.Exec.Path, real, strings.Join(c.allowed, ", "))
	}
	return nil
}

// resolve is the real path of the program kustomize runs for exec path p
// listed by the kustomization in dir: kyaml runs it with os/exec and the
// kustomization's directory as working directory, so a bare name is looked up
// on PATH and a relative path is relative to dir.
func resolve(dir, p string) (string, error) {
	switch {
	case !strings.Contains(p, "/"):
		found, err := exec.LookPath(p)
		if err != nil {
			return "", err
		}
		p = found
	case !filepath.IsAbs(p):
		p = filepath.Join(dir, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// local is entry, listed by the kustomization in dir, as a local path.
func local(dir, entry string) (string, fs.FileInfo, error) {
	path := entry
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, entry)
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", nil, fmt.Errorf("%q is not a local file or directory; the plugin cannot check remote or missing entries", entry)
	}
	return path, info, nil
}

// readKustomization reads the kustomization file in dir; file is "" when
// there is none.
func readKustomization(dir string) (file string, k kustomization, err error) {
	for _, name := range kustomizationFileNames {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", k, err
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			return "", k, &Refusal{File: path, Reason: "not a kustomization: " + err.Error()}
		}
		return path, k, nil
	}
	return "", k, nil
}
