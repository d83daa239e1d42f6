package imagetest

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// staticBases are the images a final stage may start from: distroless static
// (no libc, no shell), and its debug variant, which adds busybox's static
// shell for the Argo CD plugin sidecar, whose commands need one.
var staticBases = []string{
	"gcr.io/distroless/static-debian12:nonroot",
	"gcr.io/distroless/static-debian12:debug-nonroot",
}

// imageless are the programs under controllers/cmd that get no image, and why.
var imageless = map[string]string{
	"fleetpolicy-bench": "benchmark driver: starts local API servers on a developer machine",
	"fleetpolicy-demo":  "demo driver: starts local API servers on a developer machine",
}

// The Argo CD plugin sidecar: its image, and the patch that runs it.
const (
	cmpImage      = "fleetpolicy-argocd-cmp"
	cmpDockerfile = "build/argocd-cmp.Dockerfile"
	cmpPatch      = "examples/argocd/install/argocd-repo-server-patch.yaml"
	cmpPluginYAML = "examples/argocd/plugin.yaml"
	cmpConfigPath = "/home/argocd/cmp-server/config/plugin.yaml"
)

// defaultImage is the image make images builds for name, with the default
// registry and tag of mk/images.mk.
func defaultImage(name string) string { return "ghcr.io/fleetpolicy/" + name + ":dev" }

// goBuild finds each `go build`, and cgoOff each one that CGO_ENABLED=0
// (possibly with other variables) precedes.
var (
	goBuild = regexp.MustCompile(`\bgo build\b`)
	cgoOff  = regexp.MustCompile(`\bCGO_ENABLED=0 (\w+=\S* )*go build\b`)
)

func dockerfiles(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(krmtest.RepoRoot(t), "build", "*.Dockerfile"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no build/*.Dockerfile (%v)", err)
	}
	return paths
}

func TestDockerfiles(t *testing.T) {
	root := krmtest.RepoRoot(t)
	for _, path := range dockerfiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			d, err := parseDockerfile(path)
			if err != nil {
				t.Fatal(err)
			}
			final := d.final()
			if !slices.Contains(staticBases, final.Base) {
				t.Errorf("the final stage starts from %s, want one of %v", final.Base, staticBases)
			}
			if u, ok := final.last("USER"); !ok {
				t.Error("the final stage sets no USER: the image would run as root")
			} else if uid, gid, err := user(u.Args); err != nil {
				t.Errorf("line %d: %v", u.Line, err)
			} else if uid == 0 || gid == 0 {
				t.Errorf("line %d: USER %s runs as root", u.Line, u.Args)
			}
			if e, ok := final.last("ENTRYPOINT"); !ok {
				t.Error("the final stage has no ENTRYPOINT")
			} else if _, err := entrypoint(e.Args); err != nil {
				t.Errorf("line %d: %v", e.Line, err)
			}

			stages := map[string]bool{}
			for _, s := range d.Stages {
				for _, in := range s.Instructions {
					switch in.Keyword {
					case "RUN":
						if n, static := len(goBuild.FindAllString(in.Args, -1)), len(cgoOff.FindAllString(in.Args, -1)); n != static {
							t.Errorf("line %d: %d of %d go builds lack CGO_ENABLED=0: the binary would need libc, which the base has not", in.Line, n-static, n)
						}
					case "COPY":
						sources, from := copySources(in.Args)
						if from != "" {
							if !stages[from] {
								t.Errorf("line %d: COPY --from=%s: no earlier stage of that name", in.Line, from)
							}
							continue
						}
						for _, src := range sources {
							if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(src))); err != nil {
								t.Errorf("line %d: COPY %s: not in the build context (the repository root): %v", in.Line, src, err)
							}
						}
					}
				}
				if s.Name != "" {
					stages[s.Name] = true
				}
			}

			ignore, err := os.ReadFile(path + ".dockerignore")
			if err != nil {
				t.Fatalf("%v: without it the build context would carry bin/", err)
			}
			for _, want := range []string{"bin", ".git"} {
				if !slices.Contains(strings.Fields(string(ignore)), want) {
					t.Errorf("%s.dockerignore does not leave out %s", filepath.Base(path), want)
				}
			}
		})
	}
}

// dockerBuild is one `docker build` that `make -n images` prints.
type dockerBuild struct {
	Dockerfile, Tag string
	BuildArgs       map[string]string
}

// makeImagesPlan runs `make -n images` at the repository root with the
// defaults of mk/images.mk (the caller's DOCKER, IMAGE_REGISTRY and IMAGE_TAG
// are dropped) and returns the docker builds it would run.
func makeImagesPlan(t *testing.T) []dockerBuild {
	t.Helper()
	out := runMake(t, "-n", "images")
	if out.err != nil {
		t.Fatalf("make -n images: %v\n%s\n(the Makefile must `include mk/images.mk`)", out.err, out.output)
	}
	var builds []dockerBuild
	for _, line := range strings.Split(out.output, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "docker" || fields[1] != "build" {
			continue
		}
		b := dockerBuild{BuildArgs: map[string]string{}}
		for i := 2; i+1 < len(fields); i++ {
			switch fields[i] {
			case "-f":
				b.Dockerfile = fields[i+1]
			case "-t":
				b.Tag = fields[i+1]
			case "--build-arg":
				k, v, _ := strings.Cut(fields[i+1], "=")
				b.BuildArgs[k] = v
			default:
				continue
			}
			i++
		}
		if fields[len(fields)-1] != "." {
			t.Errorf("%q: the build context is not the repository root", line)
		}
		builds = append(builds, b)
	}
	return builds
}

type makeOutput struct {
	output string
	err    error
}

func runMake(t *testing.T, args ...string) makeOutput {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = krmtest.RepoRoot(t)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "DOCKER", "IMAGE_REGISTRY", "IMAGE_TAG", "MAKEFLAGS", "MFLAGS", "MAKELEVEL":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return makeOutput{output: out.String(), err: err}
}

// makeBinaries are the binaries `make build` produces, as the Makefile lists them.
func makeBinaries(t *testing.T) (controllers, functions []string) {
	t.Helper()
	out := runMake(t, "--eval", "print-binaries: ; @echo $(CONTROLLER_BINARIES) / $(FUNCTION_BINARIES)", "print-binaries")
	if out.err != nil {
		t.Fatalf("asking make for its binaries: %v\n%s", out.err, out.output)
	}
	c, f, ok := strings.Cut(strings.TrimSpace(out.output), "/")
	if !ok {
		t.Fatalf("asking make for its binaries: %q", out.output)
	}
	return strings.Fields(c), strings.Fields(f)
}

func TestEveryBinaryHasAnImage(t *testing.T) {
	controllers, functions := makeBinaries(t)
	if len(controllers) == 0 || len(functions) == 0 {
		t.Fatalf("make build produces controllers %v and functions %v: the lists cannot be empty", controllers, functions)
	}
	want := map[string]dockerBuild{} // by tag
	for _, f := range functions {
		tag := defaultImage(f)
		want[tag] = dockerBuild{Dockerfile: "build/function.Dockerfile", Tag: tag, BuildArgs: map[string]string{"FUNCTION": f}}
	}
	for _, c := range controllers {
		if _, ok := imageless[c]; ok {
			continue
		}
		tag := defaultImage(c)
		want[tag] = dockerBuild{Dockerfile: "build/controller.Dockerfile", Tag: tag, BuildArgs: map[string]string{"CONTROLLER": c}}
	}
	for name := range imageless {
		if !slices.Contains(controllers, name) {
			t.Errorf("%s is listed as imageless, but make build does not produce it: drop it from the list", name)
		}
	}
	cmpTag := defaultImage(cmpImage)
	want[cmpTag] = dockerBuild{Dockerfile: cmpDockerfile, Tag: cmpTag, BuildArgs: map[string]string{}}

	got := map[string]dockerBuild{}
	for _, b := range makeImagesPlan(t) {
		if _, dup := got[b.Tag]; dup {
			t.Errorf("make images builds %s twice", b.Tag)
		}
		got[b.Tag] = b
	}
	for tag, w := range want {
		g, ok := got[tag]
		switch {
		case !ok:
			t.Errorf("make images does not build %s", tag)
		case g.Dockerfile != w.Dockerfile || !maps.Equal(g.BuildArgs, w.BuildArgs):
			t.Errorf("make images builds %s from %s %v, want %s %v", tag, g.Dockerfile, g.BuildArgs, w.Dockerfile, w.BuildArgs)
		}
	}
	used := map[string]bool{}
	for tag, g := range got {
		used[g.Dockerfile] = true
		if _, ok := want[tag]; !ok {
			t.Errorf("make images builds %s, which no binary of make build needs", tag)
		}
	}
	root := krmtest.RepoRoot(t)
	for _, path := range dockerfiles(t) {
		rel, _ := filepath.Rel(root, path)
		if !used[filepath.ToSlash(rel)] {
			t.Errorf("%s: no image of make images uses it", rel)
		}
	}
}

func TestMakeImagesWithoutDockerEngineStopsFirst(t *testing.T) {
	// `false info` fails as `docker info` does without a Docker engine.
	out := runMake(t, "images", "DOCKER=false")
	if out.err == nil {
		t.Fatalf("make images succeeded although docker info failed:\n%s", out.output)
	}
	if !strings.Contains(out.output, "make images needs a Docker engine, and 'false info' cannot reach one.") {
		t.Errorf("the output does not say why make images stopped:\n%s", out.output)
	}
	if strings.Contains(out.output, "false build") {
		t.Errorf("make images ran a build before stopping:\n%s", out.output)
	}
}

func TestPluginSidecarAgreesWithItsPatch(t *testing.T) {
	root := krmtest.RepoRoot(t)
	d, err := parseDockerfile(filepath.Join(root, cmpDockerfile))
	if err != nil {
		t.Fatal(err)
	}
	final := d.final()
	u, _ := final.last("USER")
	uid, _, err := user(u.Args)
	if err != nil {
		t.Fatal(err)
	}
	copiesPluginYAML := slices.ContainsFunc(final.Instructions, func(in instruction) bool {
		sources, from := copySources(in.Args)
		return in.Keyword == "COPY" && from == "" && slices.Equal(sources, []string{cmpPluginYAML}) &&
			strings.HasSuffix(in.Args, " "+cmpConfigPath)
	})
	if !copiesPluginYAML {
		t.Errorf("%s does not copy %s to %s, where argocd-cmp-server reads it", cmpDockerfile, cmpPluginYAML, cmpConfigPath)
	}

	b, err := os.ReadFile(filepath.Join(root, cmpPatch))
	if err != nil {
		t.Fatal(err)
	}
	var patch struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Image           string `yaml:"image"`
						SecurityContext struct {
							RunAsUser *int `yaml:"runAsUser"`
						} `yaml:"securityContext"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &patch); err != nil {
		t.Fatalf("%s: %v", cmpPatch, err)
	}
	containers := patch.Spec.Template.Spec.Containers
	if len(containers) != 1 {
		t.Fatalf("%s: %d containers, want the sidecar alone", cmpPatch, len(containers))
	}
	c := containers[0]
	if want := strings.TrimSuffix(defaultImage(cmpImage), ":dev"); c.Image != want {
		t.Errorf("%s runs image %q, want %q, which make images builds", cmpPatch, c.Image, want)
	}
	if c.SecurityContext.RunAsUser == nil || *c.SecurityContext.RunAsUser != uid {
		t.Errorf("%s runs the sidecar as user %v, the image as %d: Argo CD wants both 999", cmpPatch, c.SecurityContext.RunAsUser, uid)
	}
	if uid != 999 {
		t.Errorf("%s: USER %s, Argo CD requires the plugin sidecar to run as 999", cmpDockerfile, u.Args)
	}
}
