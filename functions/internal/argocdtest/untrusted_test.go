package argocdtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// evilConfig is a function config whose function, if run, creates marker.
func evilConfig(fn string) string {
	return "apiVersion: example.com/v1\nkind: Evil\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: |\n" +
		indent(fn, "      ")
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}

// TestRepositoryCannotRunItsOwnCode: an app whose kustomizations name any
// program but fleetpolicy's installed functions is refused before kustomize
// runs anything, with a message naming the file and the path. The sidecar
// image has no shell; this sidecar has the machine's sh on its PATH, as one
// built on a base with a shell would, so that "sh on PATH" names a program
// that exists.
func TestRepositoryCannotRunItsOwnCode(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	app := loadApplication(t, repoPath(t, exampleApplication))
	s := newSidecar(t, p).withMachineTools(t, "sh")
	shell, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	shell, err = filepath.EvalSymlinks(shell)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		// setup writes the attack into the app at appDir; touch is a shell
		// command that creates the marker. It returns the file the refusal
		// must name and the exec path it must quote.
		setup func(t *testing.T, appDir, touch string) (file, path string)
	}{
		{"sh on PATH", func(t *testing.T, appDir, touch string) (string, string) {
			return addTransformer(t, appDir, "evil.yaml", evilConfig("exec:\n  path: sh\n  args: [-c, '"+touch+"']")), "sh"
		}},
		{"absolute path", func(t *testing.T, appDir, touch string) (string, string) {
			return addTransformer(t, appDir, "evil.yaml", evilConfig("exec:\n  path: "+shell+"\n  args: [-c, '"+touch+"']")), shell
		}},
		{"relative path out of the repository", func(t *testing.T, appDir, touch string) (string, string) {
			rel, err := filepath.Rel(appDir, shell)
			if err != nil {
				t.Fatal(err)
			}
			return addTransformer(t, appDir, "evil.yaml", evilConfig("exec:\n  path: "+rel+"\n  args: [-c, '"+touch+"']")), rel
		}},
		{"script in the repository", func(t *testing.T, appDir, touch string) (string, string) {
			writeFile(t, filepath.Join(appDir, "render.sh"), "#!/bin/sh\n"+touch+"\n", 0o755)
			return addTransformer(t, appDir, "evil.yaml", evilConfig("exec:\n  path: ./render.sh")), "./render.sh"
		}},
		{"symlink in the repository to sh", func(t *testing.T, appDir, touch string) (string, string) {
			if err := os.Symlink(shell, filepath.Join(appDir, "validate")); err != nil {
				t.Fatal(err)
			}
			return addTransformer(t, appDir, "evil.yaml", evilConfig("exec:\n  path: ./validate\n  args: [-c, '"+touch+"']")), "./validate"
		}},
		{"symlink in the repository to a script", func(t *testing.T, appDir, touch string) (string, string) {
			writeFile(t, filepath.Join(appDir, "render.sh"), "#!/bin/sh\n"+touch+"\n", 0o755)
			if err := os.Symlink("render.sh", filepath.Join(appDir, "validate")); err != nil {
				t.Fatal(err)
			}
			return addTransformer(t, appDir, "evil.yaml", evilConfig("exec:\n  path: ./validate")), "./validate"
		}},
		{"nested kustomization", func(t *testing.T, appDir, touch string) (string, string) {
			nested := filepath.Join(appDir, "base")
			if err := os.Mkdir(nested, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(nested, "kustomization.yaml"), "transformers:\n- evil.yaml\n", 0o644)
			writeFile(t, filepath.Join(nested, "evil.yaml"), evilConfig("exec:\n  path: sh\n  args: [-c, '"+touch+"']"), 0o644)
			appendResource(t, appDir, "base")
			return filepath.Join(nested, "evil.yaml"), "sh"
		}},
		{"inline transformer", func(t *testing.T, appDir, touch string) (string, string) {
			inline := evilConfig("exec:\n  path: sh\n  args: [-c, '" + touch + "']")
			appendToKustomization(t, appDir, "generators:\n- |\n"+indent(inline, "  "))
			return filepath.Join(appDir, "kustomization.yaml"), "sh"
		}},
		{"container function", func(t *testing.T, appDir, touch string) (string, string) {
			return addTransformer(t, appDir, "evil.yaml", evilConfig("container:\n  image: example.com/evil:latest")), "example.com/evil:latest"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			appDir := checkout(t, p, app)
			marker := filepath.Join(t.TempDir(), "ran")
			file, path := tc.setup(t, appDir, "echo ran > "+marker) // a shell builtin: the sidecar has no touch

			r := s.generate(t, appDir, requestEnv(t, app))
			if r.Err == nil {
				t.Errorf("manifest generation succeeded; stdout:\n%s", r.Stdout)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the repository's program ran (it created %s)", marker)
			}
			for _, want := range []string{"refused", file, path} {
				if !strings.Contains(r.Stderr, want) {
					t.Errorf("stderr does not name %q:\n%s", want, r.Stderr)
				}
			}
			if r.Stdout != "" {
				t.Errorf("a refused generation printed to stdout:\n%s", r.Stdout)
			}
		})
	}
}

// TestInstalledFunctionByAbsolutePathRenders: the check compares real paths,
// so a function named by its absolute installed path is still allowed.
func TestInstalledFunctionByAbsolutePathRenders(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	app := loadApplication(t, repoPath(t, exampleApplication))
	s := newSidecar(t, p)
	appDir := checkout(t, p, app)
	config := filepath.Join(appDir, "validate-dependencies.yaml")
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(functionBinaries(t), "validate-dependencies")
	writeFile(t, config, strings.Replace(string(b), "path: validate-dependencies", "path: "+abs, 1), 0o644)

	r := s.generate(t, appDir, requestEnv(t, app))
	if r.Err != nil {
		t.Fatalf("manifest generation failed: %v\nstderr:\n%s", r.Err, r.Stderr)
	}
	if n := len(manifests(t, r.Stdout)); n != len(wantObjects) {
		t.Errorf("rendered %d objects, want %d", n, len(wantObjects))
	}
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// addTransformer writes content to name in appDir, lists it under the app's
// transformers and returns its path.
func addTransformer(t *testing.T, appDir, name, content string) string {
	t.Helper()
	path := filepath.Join(appDir, name)
	writeFile(t, path, content, 0o644)
	appendToKustomization(t, appDir, "- "+name+"\n") // the file ends with its transformers list
	return path
}

func appendResource(t *testing.T, appDir, entry string) {
	t.Helper()
	kustomization := filepath.Join(appDir, "kustomization.yaml")
	b, err := os.ReadFile(kustomization)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, kustomization, strings.Replace(string(b), "resources:\n", "resources:\n- "+entry+"\n", 1), 0o644)
}

func appendToKustomization(t *testing.T, appDir, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(appDir, "kustomization.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// TestRelativePathResolvesFromTheListingKustomization: kustomize runs a
// relative exec path from the directory of the kustomization that lists the
// function, and the check resolves it there too: a nested symlink to an
// installed function renders, and a script of the same name in the app
// directory never runs.
func TestRelativePathResolvesFromTheListingKustomization(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	app := loadApplication(t, repoPath(t, exampleApplication))
	s := newSidecar(t, p)
	appDir := checkout(t, p, app)
	marker := filepath.Join(t.TempDir(), "ran")
	writeFile(t, filepath.Join(appDir, "validate"), "#!/bin/sh\necho ran > "+marker+"\n", 0o755)
	nested := filepath.Join(appDir, "checks")
	if err := os.Mkdir(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(functionBinaries(t), "validate-dependencies"), filepath.Join(nested, "validate")); err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile(filepath.Join(appDir, "validate-dependencies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(nested, "validate-dependencies.yaml"),
		strings.Replace(string(config), "path: validate-dependencies", "path: ./validate", 1), 0o644)
	writeFile(t, filepath.Join(nested, "kustomization.yaml"), "kind: Component\napiVersion: kustomize.config.k8s.io/v1alpha1\ntransformers:\n- validate-dependencies.yaml\n", 0o644)
	appendToKustomization(t, appDir, "components:\n- checks\n")

	r := s.generate(t, appDir, requestEnv(t, app))
	if r.Err != nil {
		t.Fatalf("manifest generation failed: %v\nstderr:\n%s", r.Err, r.Stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the app directory's script ran (it created %s)", marker)
	}
	if n := len(manifests(t, r.Stdout)); n != len(wantObjects) {
		t.Errorf("rendered %d objects, want %d", n, len(wantObjects))
	}
}
