package imagetest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// imageless are the programs under controllers/cmd that get no image, and why.
var imageless = map[string]string{
	"fleetpolicy-bench":   "benchmark driver: starts local API servers on a developer machine",
	"fleetpolicy-demo":    "demo driver: starts local API servers on a developer machine",
	"fleetpolicy-console": "runs beside its viewer (a workstation, or behind an authenticating proxy): no manifest deploys it yet",
}

// The Argo CD plugin sidecar: its image, and the patch that runs it.
const (
	cmpImage = "fleetpolicy-argocd-cmp"
	cmpPatch = "examples/argocd/install/argocd-repo-server-patch.yaml"
)

// builtFunction is the function whose image TestFunctionImage builds.
const builtFunction = "validate-dependencies"

// defaultImage is the reference make images gives name, with the default
// registry and tag of mk/images.mk.
func defaultImage(name string) string { return "ghcr.io/fleetpolicy/" + name + ":dev" }

type makeOutput struct {
	output string
	err    error
}

// runMake runs make at the repository root with the defaults of mk/images.mk
// (the caller's IMAGE_* variables are dropped).
func runMake(t *testing.T, args ...string) makeOutput {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = krmtest.RepoRoot(t)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "IMAGE_") || slices.Contains([]string{"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}, name) {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return makeOutput{output: out.String(), err: err}
}

// makeVars asks make for the values of vars, one line each.
func makeVars(t *testing.T, vars ...string) [][]string {
	t.Helper()
	recipe := "@true"
	for _, v := range vars {
		recipe += fmt.Sprintf("; echo '$(%s)'", v)
	}
	out := runMake(t, "--eval", "print-vars: ; "+recipe, "print-vars")
	if out.err != nil {
		t.Fatalf("asking make for %v: %v\n%s", vars, out.err, out.output)
	}
	lines := strings.Split(strings.TrimRight(out.output, "\n"), "\n")
	if len(lines) != len(vars) {
		t.Fatalf("asking make for %v: %q", vars, out.output)
	}
	var values [][]string
	for _, l := range lines {
		values = append(values, strings.Fields(l))
	}
	return values
}

func TestEveryBinaryHasAnImage(t *testing.T) {
	v := makeVars(t, "CONTROLLER_BINARIES", "FUNCTION_BINARIES", "IMAGE_SPECS", "CMP_IMAGE")
	controllers, functions, specs := v[0], v[1], v[2]
	if len(controllers) == 0 || len(functions) == 0 {
		t.Fatalf("make build produces controllers %v and functions %v: the lists cannot be empty", controllers, functions)
	}
	if len(v[3]) != 1 || v[3][0] != cmpImage {
		t.Errorf("CMP_IMAGE is %v, want %s (the image examples/argocd installs)", v[3], cmpImage)
	}
	// The pause image is the e2e node's sandbox image (mk/node.mk), built
	// from hack/node/pause, no binary of make build.
	want := []string{"argocd-cmp:" + cmpImage, "pause:fleetpolicy-pause"}
	for _, f := range functions {
		want = append(want, "function:"+f)
	}
	for _, c := range controllers {
		if _, ok := imageless[c]; !ok {
			want = append(want, "controller:"+c)
		}
	}
	for name := range imageless {
		if !slices.Contains(controllers, name) {
			t.Errorf("%s is listed as imageless, but make build does not produce it: drop it from the list", name)
		}
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(specs))
	if !slices.Equal(got, want) {
		t.Errorf("make images builds %v, want %v", got, want)
	}
	if !slices.Contains(functions, builtFunction) {
		t.Errorf("TestFunctionImage builds %s, which is not a function any more", builtFunction)
	}
}

func TestOneWayToBuildAnImage(t *testing.T) {
	root := krmtest.RepoRoot(t)
	for _, pattern := range []string{"*Dockerfile*", "build/*", "*/Containerfile*"} {
		found, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, f := range found {
			if strings.Contains(filepath.Base(f), "Dockerfile") || strings.Contains(filepath.Base(f), "Containerfile") {
				rel, _ := filepath.Rel(root, f)
				t.Errorf("%s: images are built by hack/imagebuild (make images) alone", rel)
			}
		}
	}
	out := runMake(t, "-n", "images")
	if out.err != nil {
		t.Fatalf("make -n images: %v\n%s", out.err, out.output)
	}
	for _, l := range strings.Split(out.output, "\n") {
		if f := strings.Fields(l); len(f) > 0 && (path.Base(f[0]) == "docker" || path.Base(f[0]) == "podman" || path.Base(f[0]) == "buildah") {
			t.Errorf("make images runs %s: %s", f[0], l)
		}
	}
	if !strings.Contains(out.output, "imagebuild build") {
		t.Errorf("make -n images does not run hack/imagebuild:\n%s", out.output)
	}
}

func TestImagesPushNeedsARegistry(t *testing.T) {
	out := runMake(t, "images-push")
	if out.err == nil {
		t.Fatalf("make images-push without IMAGE_REGISTRY succeeded:\n%s", out.output)
	}
	if !strings.Contains(out.output, "make images-push needs a registry: make images-push IMAGE_REGISTRY=") {
		t.Errorf("the output does not say what is missing:\n%s", out.output)
	}
	if strings.Contains(out.output, "imagebuild build") || strings.Contains(out.output, "go build") {
		t.Errorf("make images-push built something before stopping:\n%s", out.output)
	}
}

func TestPluginSidecarAgreesWithItsPatch(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(krmtest.RepoRoot(t), cmpPatch))
	if err != nil {
		t.Fatal(err)
	}
	var patch struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Image           string   `yaml:"image"`
						Command         []string `yaml:"command"`
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
	// hack/imagebuild's own tests check that the image runs as 999 with this
	// entrypoint.
	if c.SecurityContext.RunAsUser == nil || *c.SecurityContext.RunAsUser != 999 {
		t.Errorf("%s runs the sidecar as user %v: Argo CD wants 999, the user of the image", cmpPatch, c.SecurityContext.RunAsUser)
	}
	if !slices.Equal(c.Command, []string{"/var/run/argocd/argocd-cmp-server"}) {
		t.Errorf("%s runs %v, want the image's entrypoint /var/run/argocd/argocd-cmp-server", cmpPatch, c.Command)
	}
}

// archive is an image archive read whole: its files by name.
type archive map[string][]byte

func readArchive(t *testing.T, p string) archive {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := archive{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return a
		}
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			a[h.Name] = b
		}
	}
}

type descriptor struct {
	MediaType    string            `json:"mediaType"`
	Digest       string            `json:"digest"`
	Size         int64             `json:"size"`
	ArtifactType string            `json:"artifactType"`
	Annotations  map[string]string `json:"annotations"`
	Platform     *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

type manifest struct {
	MediaType string       `json:"mediaType"`
	Config    descriptor   `json:"config"`
	Layers    []descriptor `json:"layers"`
}

type config struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
	RootFS struct {
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// blob returns the blob d names, checking its digest and size.
func (a archive) blob(t *testing.T, d descriptor) []byte {
	t.Helper()
	hexDigest, ok := strings.CutPrefix(d.Digest, "sha256:")
	if !ok {
		t.Fatalf("digest %q is not sha256", d.Digest)
	}
	b, ok := a["blobs/sha256/"+hexDigest]
	if !ok {
		t.Fatalf("blob %s is not in the archive", d.Digest)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexDigest {
		t.Fatalf("blob %s holds sha256:%x", d.Digest, sum)
	}
	if int64(len(b)) != d.Size {
		t.Fatalf("blob %s: %d bytes, its descriptor says %d", d.Digest, len(b), d.Size)
	}
	return b
}

func (a archive) json(t *testing.T, d descriptor, v any) {
	t.Helper()
	if err := json.Unmarshal(a.blob(t, d), v); err != nil {
		t.Fatalf("blob %s: %v", d.Digest, err)
	}
}

// layerFiles unpacks a gzipped layer: regular files by absolute path, and
// every path (files, directories, links) it holds.
func layerFiles(t *testing.T, layer []byte, diffID string) (files map[string][]byte, modes map[string]int64, all []string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		t.Fatalf("layer: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("layer: %v", err)
	}
	if sum := sha256.Sum256(raw); "sha256:"+hex.EncodeToString(sum[:]) != diffID {
		t.Errorf("layer's uncompressed digest sha256:%x is not its diff_id %s", sum, diffID)
	}
	files, modes = map[string][]byte{}, map[string]int64{}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, modes, all
		}
		if err != nil {
			t.Fatalf("layer: %v", err)
		}
		p := path.Clean("/" + h.Name)
		all = append(all, p)
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			files[p], modes[p] = b, h.Mode
		}
	}
}

// shells are programs a shell-less image must not hold.
var shells = []string{"sh", "bash", "ash", "dash", "zsh", "busybox", "toybox"}

var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

func TestFunctionImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image for two platforms (go build); skipped under -short")
	}
	out := t.TempDir()
	res := runMake(t, "image/"+builtFunction, "IMAGE_OUT="+out)
	if res.err != nil {
		t.Fatalf("make image/%s: %v\n%s", builtFunction, res.err, res.output)
	}
	revision, err := exec.CommandContext(t.Context(), "git", "-C", krmtest.RepoRoot(t), "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	archivePath := filepath.Join(out, builtFunction+".tar")
	a := readArchive(t, archivePath)
	ref := defaultImage(builtFunction)

	if !bytes.Contains(a["oci-layout"], []byte(`"imageLayoutVersion":`)) || !bytes.Contains(a["oci-layout"], []byte(`"1.0.0"`)) {
		t.Errorf("oci-layout: %q", a["oci-layout"])
	}
	var top index
	if err := json.Unmarshal(a["index.json"], &top); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	// One entry, the multi-platform index: podman's oci-archive reader refuses
	// more than one; containerd and podman take the name from its annotations.
	if len(top.Manifests) != 1 {
		t.Fatalf("index.json has %d entries, want 1 (the image index)", len(top.Manifests))
	}
	entry := top.Manifests[0]
	if entry.MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Errorf("index.json's entry is a %s, want an OCI image index", entry.MediaType)
	}
	for _, k := range []string{"io.containerd.image.name", "org.opencontainers.image.ref.name"} {
		if entry.Annotations[k] != ref {
			t.Errorf("index.json's entry: %s = %q, want %q", k, entry.Annotations[k], ref)
		}
	}
	var idx index
	a.json(t, entry, &idx)

	var docker []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(a["manifest.json"], &docker); err != nil {
		t.Fatalf("manifest.json (what Docker's classic image store loads): %v", err)
	}
	if len(docker) != 1 || !slices.Equal(docker[0].RepoTags, []string{ref}) {
		t.Fatalf("manifest.json %+v, want one image tagged %s", docker, ref)
	}
	dockerNamed := false

	var platforms []string
	for _, d := range idx.Manifests {
		if d.Platform == nil {
			t.Fatalf("index entry %s has no platform", d.Digest)
		}
		arch := d.Platform.Architecture
		platforms = append(platforms, d.Platform.OS+"/"+arch)
		t.Run(d.Platform.OS+"-"+arch, func(t *testing.T) {
			if d.MediaType != "application/vnd.oci.image.manifest.v1+json" || d.ArtifactType != "" {
				t.Errorf("index entry: mediaType %s, artifactType %q: want an OCI image manifest, no artifact", d.MediaType, d.ArtifactType)
			}
			var m manifest
			a.json(t, d, &m)
			var cfg config
			a.json(t, m.Config, &cfg)
			if cfg.OS != d.Platform.OS || cfg.Architecture != arch {
				t.Errorf("config says %s/%s, the index %s/%s", cfg.OS, cfg.Architecture, d.Platform.OS, arch)
			}
			if uid, _, _ := strings.Cut(cfg.Config.User, ":"); uid != "65532" {
				t.Errorf("User %q, want 65532 (numeric, non-root)", cfg.Config.User)
			}
			binary := "/usr/local/bin/" + builtFunction
			if !slices.Equal(cfg.Config.Entrypoint, []string{binary}) || len(cfg.Config.Cmd) != 0 {
				t.Errorf("Entrypoint %q Cmd %q, want [%s] alone", cfg.Config.Entrypoint, cfg.Config.Cmd, binary)
			}
			labels := cfg.Config.Labels
			for k, want := range map[string]string{
				"org.opencontainers.image.source":   "https://github.com/fleetpolicy/fleetpolicy",
				"org.opencontainers.image.revision": strings.TrimSpace(string(revision)),
				"org.opencontainers.image.title":    builtFunction,
			} {
				if labels[k] != want {
					t.Errorf("label %s = %q, want %q", k, labels[k], want)
				}
			}
			for _, k := range []string{"org.opencontainers.image.version", "org.opencontainers.image.created", "org.opencontainers.image.base.digest"} {
				if labels[k] == "" {
					t.Errorf("label %s is not set", k)
				}
			}
			if len(m.Layers) != len(cfg.RootFS.DiffIDs) {
				t.Fatalf("%d layers, %d diff_ids", len(m.Layers), len(cfg.RootFS.DiffIDs))
			}
			files, modes := map[string][]byte{}, map[string]int64{}
			var layerPaths []string
			for i, l := range m.Layers {
				if l.MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
					t.Errorf("layer %s is a %s", l.Digest, l.MediaType)
				}
				lf, lm, all := layerFiles(t, a.blob(t, l), cfg.RootFS.DiffIDs[i])
				for p, b := range lf {
					files[p], modes[p] = b, lm[p]
				}
				for _, p := range all {
					if slices.Contains(shells, path.Base(p)) {
						t.Errorf("layer %d holds %s: the image must have no shell", i, p)
					}
				}
				layerPaths = append(layerPaths, "blobs/sha256/"+strings.TrimPrefix(l.Digest, "sha256:"))
			}
			if docker[0].Config == "blobs/sha256/"+strings.TrimPrefix(m.Config.Digest, "sha256:") {
				dockerNamed = true
				if !slices.Equal(docker[0].Layers, layerPaths) {
					t.Errorf("manifest.json names layers %v, the image has %v", docker[0].Layers, layerPaths)
				}
			}

			bin, ok := files[binary]
			if !ok {
				t.Fatalf("%s is not in the image", binary)
			}
			if modes[binary]&0o111 == 0 {
				t.Errorf("%s is not executable (mode %o)", binary, modes[binary])
			}
			checkStaticELF(t, bin, arch)

			sbomPath := labels["io.fleetpolicy.image.sbom"]
			sbom, ok := files[sbomPath]
			if sbomPath == "" || !ok {
				t.Fatalf("the SBOM the label io.fleetpolicy.image.sbom names (%q) is not in the image", sbomPath)
			}
			checkSBOM(t, sbom, bin, binary)

			if !strings.Contains(string(files["/etc/passwd"]), ":x:65532:65532:") {
				t.Errorf("/etc/passwd has no entry for 65532:\n%s", files["/etc/passwd"])
			}
			if !bytes.Contains(files["/etc/ssl/certs/ca-certificates.crt"], []byte("BEGIN CERTIFICATE")) {
				t.Error("no CA bundle at /etc/ssl/certs/ca-certificates.crt")
			}
		})
	}
	if strings.Join(platforms, ",") != "linux/amd64,linux/arm64" {
		t.Errorf("the index has %v, want linux/amd64 and linux/arm64", platforms)
	}
	if !dockerNamed {
		t.Errorf("manifest.json names config %s, which is no platform's image", docker[0].Config)
	}
	ctrImport(t, archivePath, ref)
}

// checkStaticELF fails unless bin is a statically linked ELF executable for
// GOARCH arch.
func checkStaticELF(t *testing.T, bin []byte, arch string) {
	t.Helper()
	for _, p := range staticELFProblems(bin, arch) {
		t.Error(p)
	}
}

// staticELFProblems says why bin is not a statically linked ELF executable
// for GOARCH arch; nothing when it is one.
func staticELFProblems(bin []byte, arch string) []string {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return []string{fmt.Sprintf("the binary is not ELF: %v", err)}
	}
	defer f.Close()
	var problems []string
	if want, ok := elfMachine[arch]; !ok || f.Machine != want {
		problems = append(problems, fmt.Sprintf("the binary is for %s, want %s (%s)", f.Machine, want, arch))
	}
	if f.Type != elf.ET_EXEC {
		problems = append(problems, fmt.Sprintf("the binary is an ELF %s, want a static ET_EXEC", f.Type))
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			problems = append(problems, fmt.Sprintf("the binary has a %s segment: it is dynamically linked (CGO_ENABLED=0 is missing)", p.Type))
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		problems = append(problems, fmt.Sprintf("the binary needs %v", libs))
	}
	return problems
}

// TestStaticELFCheck shows the check TestFunctionImage runs on a binary
// refuses a dynamically linked one: this machine's own ls.
func TestStaticELFCheck(t *testing.T) {
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls on PATH")
	}
	b, err := os.ReadFile(ls)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Skipf("%s is not ELF: %v", ls, err)
	}
	libs, _ := f.ImportedLibraries()
	f.Close()
	if len(libs) == 0 {
		t.Skipf("%s is statically linked here", ls)
	}
	arch := map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine]
	if problems := staticELFProblems(b, arch); len(problems) == 0 {
		t.Errorf("%s (dynamically linked, needs %v) passes the static check", ls, libs)
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[arch]
	if problems := staticELFProblems(b, other); !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "want ") }) {
		t.Errorf("%s passes as a %s binary: %v", ls, other, problems)
	}
}

// checkSBOM fails unless sbom is an SPDX 2.3 document that describes the
// binary at binaryPath and lists every module of its build information.
func checkSBOM(t *testing.T, sbom, bin []byte, binaryPath string) {
	t.Helper()
	var doc struct {
		SPDXVersion string `json:"spdxVersion"`
		Packages    []struct {
			SPDXID      string `json:"SPDXID"`
			Name        string `json:"name"`
			VersionInfo string `json:"versionInfo"`
		} `json:"packages"`
		Relationships []struct {
			Element string `json:"spdxElementId"`
			Type    string `json:"relationshipType"`
			Related string `json:"relatedSpdxElement"`
		} `json:"relationships"`
	}
	if err := json.Unmarshal(sbom, &doc); err != nil {
		t.Fatalf("SBOM: %v", err)
	}
	if doc.SPDXVersion != "SPDX-2.3" {
		t.Errorf("SBOM spdxVersion %q", doc.SPDXVersion)
	}
	listed := map[string]string{}
	ids := map[string]string{}
	for _, p := range doc.Packages {
		listed[p.Name] = p.VersionInfo
		ids[p.Name] = p.SPDXID
	}
	if _, ok := listed[binaryPath]; !ok {
		t.Errorf("the SBOM has no package for %s", binaryPath)
	}
	described := slices.ContainsFunc(doc.Relationships, func(r struct {
		Element string `json:"spdxElementId"`
		Type    string `json:"relationshipType"`
		Related string `json:"relatedSpdxElement"`
	}) bool {
		return r.Element == "SPDXRef-DOCUMENT" && r.Type == "DESCRIBES" && r.Related == ids[binaryPath]
	})
	if !described {
		t.Errorf("the SBOM does not DESCRIBE %s", binaryPath)
	}
	info, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("the binary's build information: %v", err)
	}
	if len(info.Deps) == 0 {
		t.Fatal("the binary names no module")
	}
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		if v, ok := listed[m.Path]; !ok || v != m.Version {
			t.Errorf("the SBOM lists %s at %q, the binary links %s", m.Path, v, m.Version)
		}
	}
	if listed["stdlib"] != info.GoVersion {
		t.Errorf("the SBOM lists the standard library at %q, the binary was built with %s", listed["stdlib"], info.GoVersion)
	}
}

// ctrImport imports the archive into containerd where ctr and a containerd
// socket are on this machine (skipped otherwise: nothing is installed here for
// it).
func ctrImport(t *testing.T, archivePath, ref string) {
	t.Helper()
	ctr, err := exec.LookPath("ctr")
	socket := "/run/containerd/containerd.sock"
	if _, serr := os.Stat(socket); err != nil || serr != nil {
		t.Logf("ctr images import not tried: no ctr on PATH or no %s", socket)
		return
	}
	const ns = "fleetpolicy-imagetest"
	run := func(args ...string) string {
		out, err := exec.CommandContext(t.Context(), ctr, append([]string{"--address", socket, "--namespace", ns}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("images", "import", "--all-platforms", archivePath)
	defer run("images", "rm", ref)
	if list := run("images", "ls", "-q"); !strings.Contains(list, ref) {
		t.Errorf("ctr images import did not create %s:\n%s", ref, list)
	}
}
