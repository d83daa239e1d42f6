package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"go.yaml.in/yaml/v3"
)

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
)

// testOptions builds from a fake repository and fake binaries: copies of
// this test's own executable, which carries Go build information as a real
// binary does.
func testOptions(t *testing.T) (buildOptions, string) {
	t.Helper()
	root := t.TempDir()
	write := func(rel, content string, mode os.FileMode) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("functions/fn-a/main.go", "package main\n", 0o644)
	write("functions/fn-b/main.go", "package main\n", 0o644)
	write(cmpGenerate+"/main.go", "package main\n", 0o644)
	write(cmpPluginYAML, string(realPluginYAML(t)), 0o644)
	write("ca.crt", "-----BEGIN CERTIFICATE-----\n", 0o644)

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bins := t.TempDir()
	for _, n := range []string{"fn-a", "fn-b", "fleetpolicy-cmp-generate", "kustomize", "fleetpolicy-hub", pauseBinary} {
		if err := os.WriteFile(filepath.Join(bins, n), exe, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return buildOptions{
		Root: root, Registry: "registry.example.com/fleetpolicy", Tag: "v9", Version: "v9.0.0",
		Revision: "0123456789abcdef0123456789abcdef01234567", Source: "https://github.com/fleetpolicy/fleetpolicy",
		CABundle: filepath.Join(root, "ca.crt"), Created: time.Unix(1700000000, 0).UTC(),
		Platforms: []v1.Platform{amd64, arm64}, DockerPlatform: amd64,
	}, bins
}

// realPluginYAML is the repository's examples/argocd/plugin.yaml.
func realPluginYAML(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(cmpPluginYAML)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func localBaseSet(t *testing.T, o buildOptions) *baseSet {
	t.Helper()
	b, err := resolveBase(context.Background(), "", o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// files reads every layer of img into path -> header and content.
func files(t *testing.T, img v1.Image) map[string]fileInfo {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fileInfo{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(tr)
			out["/"+strings.TrimSuffix(h.Name, "/")] = fileInfo{h, b}
		}
		rc.Close()
	}
	return out
}

type fileInfo struct {
	hdr  *tar.Header
	data []byte
}

func TestFunctionImage(t *testing.T) {
	o, bins := testOptions(t)
	b := localBaseSet(t, o)
	img, err := imageFor(o, spec{kindFunction, "fn-a"}, arm64, b, bins)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != "arm64" || cf.OS != "linux" {
		t.Errorf("platform %s/%s, want linux/arm64", cf.OS, cf.Architecture)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("User %q, want 65532:65532", cf.Config.User)
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != "/usr/local/bin/fn-a" {
		t.Errorf("Entrypoint %q", got)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":      o.Source,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.base.name":   localBaseName,
		sbomLabel:                              "/usr/share/sbom/fn-a.spdx.json",
		"org.opencontainers.image.created":     "2023-11-14T22:13:20Z",
		"org.opencontainers.image.description": "fleetpolicy KRM function fn-a",
	} {
		if got := cf.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	fs := files(t, img)
	for _, p := range []string{"/bin/sh", "/busybox", "/bin"} {
		if _, ok := fs[p]; ok {
			t.Errorf("%s is in the image", p)
		}
	}
	if f := fs["/usr/local/bin/fn-a"]; f.hdr == nil || f.hdr.Mode&0o111 == 0 || f.hdr.Uid != 0 {
		t.Errorf("/usr/local/bin/fn-a missing, not executable or not root's: %+v", f.hdr)
	}
	if !strings.Contains(string(fs["/etc/passwd"].data), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot 65532:\n%s", fs["/etc/passwd"].data)
	}
	if string(fs["/etc/ssl/certs/ca-certificates.crt"].data) != "-----BEGIN CERTIFICATE-----\n" {
		t.Error("the CA bundle is not the one given")
	}
	if f := fs["/tmp"]; f.hdr == nil || f.hdr.Mode != 0o1777 {
		t.Errorf("/tmp: %+v", f.hdr)
	}
	var sbom spdxDocument
	if err := json.Unmarshal(fs["/usr/share/sbom/fn-a.spdx.json"].data, &sbom); err != nil {
		t.Fatalf("SBOM: %v", err)
	}
	var names []string
	for _, p := range sbom.Packages {
		names = append(names, p.Name)
	}
	for _, want := range []string{"/usr/local/bin/fn-a", "stdlib", "github.com/google/go-containerregistry"} {
		if !strings.Contains(strings.Join(names, "\n")+"\n", want+"\n") {
			t.Errorf("the SBOM has no package %s: %v", want, names)
		}
	}
	// Reproducible: the same inputs give the same digest.
	again, err := imageFor(o, spec{kindFunction, "fn-a"}, arm64, b, bins)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of the same image differ: %s, %s", d1, d2)
	}
}

// TestPauseImage: the e2e node's sandbox image holds the pause binary as its
// entrypoint, runs as nonroot and, like every image, has no shell; its
// packages and build come from hack/node/pause, a module of its own.
func TestPauseImage(t *testing.T) {
	o, bins := testOptions(t)
	o.Specs = []spec{{kindPause, "fleetpolicy-pause"}}
	pkgs, extra, err := packages(o)
	if err != nil || len(pkgs) != 0 || !extra.Pause || extra.Kustomize {
		t.Fatalf("packages of a pause image: %v %+v %v; want no workspace package, the pause module alone", pkgs, extra, err)
	}
	img, err := imageFor(o, spec{kindPause, "fleetpolicy-pause"}, amd64, localBaseSet(t, o), bins)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != "/usr/local/bin/pause" || cf.Config.User != "65532:65532" {
		t.Errorf("entrypoint %q, user %q; want /usr/local/bin/pause, 65532:65532", got, cf.Config.User)
	}
	fs := files(t, img)
	if f := fs["/usr/local/bin/pause"]; f.hdr == nil || f.hdr.Mode&0o111 == 0 {
		t.Errorf("/usr/local/bin/pause missing or not executable: %+v", f.hdr)
	}
	if _, ok := fs["/bin/sh"]; ok {
		t.Error("/bin/sh is in the image")
	}
	if _, err := os.Stat(filepath.Join("..", "node", "pause", "go.mod")); err != nil {
		t.Errorf("the pause module: %v", err)
	}
}

func TestSidecarImage(t *testing.T) {
	o, bins := testOptions(t)
	img, err := imageFor(o, spec{kindCMP, "fleetpolicy-argocd-cmp"}, amd64, localBaseSet(t, o), bins)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "999:999" {
		t.Errorf("User %q: Argo CD requires the plugin sidecar to run as 999", cf.Config.User)
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != cmpEntrypoint {
		t.Errorf("Entrypoint %q, want %s", got, cmpEntrypoint)
	}
	if !strings.Contains(strings.Join(cf.Config.Env, " "), "HOME=/home/argocd") {
		t.Errorf("Env %v has no HOME=/home/argocd", cf.Config.Env)
	}
	fs := files(t, img)
	for _, p := range []string{"kustomize", "fn-a", "fn-b", "fleetpolicy-cmp-generate"} {
		if f := fs["/usr/local/bin/"+p]; f.hdr == nil || f.hdr.Mode&0o111 == 0 {
			t.Errorf("/usr/local/bin/%s missing or not executable", p)
		}
	}
	if _, ok := fs["/usr/local/bin/fleetpolicy-hub"]; ok {
		t.Error("the sidecar holds a controller")
	}
	plugin := fs[cmpConfigPath].data
	if !bytes.Equal(plugin, realPluginYAML(t)) {
		t.Errorf("%s is not examples/argocd/plugin.yaml", cmpConfigPath)
	}
	// Every command plugin.yaml runs is a program of the image, found on its
	// PATH as argocd-cmp-server finds it; the image has no shell, so a
	// plugin.yaml that needed one (sh -c ..., a script) fails here.
	var pathDirs []string
	for _, kv := range cf.Config.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathDirs = strings.Split(v, ":")
		}
	}
	for name, argv0 := range pluginCommands(t, plugin) {
		candidates := []string{argv0}
		if !strings.Contains(argv0, "/") {
			candidates = nil
			for _, dir := range pathDirs {
				candidates = append(candidates, path.Join(dir, argv0))
			}
		}
		found := false
		for _, c := range candidates {
			f := fs[c]
			found = found || f.hdr != nil && f.hdr.Typeflag == tar.TypeReg && f.hdr.Mode&0o111 != 0
		}
		if !found {
			t.Errorf("plugin.yaml's %s command runs %q, which is not an executable file of the image on its PATH %v", name, argv0, pathDirs)
		}
	}
	for _, dir := range append(pathDirs, "/", "/bin", "/usr/bin", "/busybox") {
		for _, sh := range []string{"sh", "bash", "ash", "dash", "busybox"} {
			if _, ok := fs[path.Join(dir, sh)]; ok {
				t.Errorf("the sidecar holds %s: the plugin needs no shell", path.Join(dir, sh))
			}
		}
	}
	if f := fs["/home/argocd"]; f.hdr == nil || f.hdr.Uid != 999 {
		t.Errorf("/home/argocd is not 999's: %+v", f.hdr)
	}
	if !strings.Contains(string(fs["/etc/passwd"].data), "argocd:x:999:999:") {
		t.Errorf("/etc/passwd has no argocd 999")
	}
}

// pluginCommands reads a ConfigManagementPlugin and returns argv[0] of its
// init, generate and discover.find commands, each of which it requires.
func pluginCommands(t *testing.T, pluginYAML []byte) map[string]string {
	t.Helper()
	type command struct {
		Command []string `yaml:"command"`
	}
	var p struct {
		Spec struct {
			Init     command `yaml:"init"`
			Generate command `yaml:"generate"`
			Discover struct {
				Find command `yaml:"find"`
			} `yaml:"discover"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(pluginYAML, &p); err != nil {
		t.Fatalf("plugin.yaml: %v", err)
	}
	out := map[string]string{}
	for name, c := range map[string]command{"init": p.Spec.Init, "generate": p.Spec.Generate, "discover.find": p.Spec.Discover.Find} {
		if len(c.Command) == 0 || c.Command[0] == "" {
			t.Errorf("plugin.yaml has no %s command", name)
			continue
		}
		out[name] = c.Command[0]
	}
	return out
}

// writeTestArchive builds fn-a for both platforms into an archive.
func writeTestArchive(t *testing.T) (string, buildOptions, v1.Hash) {
	t.Helper()
	o, bins := testOptions(t)
	b := localBaseSet(t, o)
	var imgs []v1.Image
	for _, p := range o.Platforms {
		img, err := imageFor(o, spec{kindFunction, "fn-a"}, p, b, bins)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	idx, err := newPlatformIndex(imgs, o.Platforms, o.annotations(spec{kindFunction, "fn-a"}))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fn-a.tar")
	if err := writeArchive(out, o.ref("fn-a"), idx, imgs[0]); err != nil {
		t.Fatal(err)
	}
	d, _ := idx.Digest()
	return out, o, d
}

func TestArchive(t *testing.T) {
	out, o, digest := writeTestArchive(t)
	// What push reads back is a valid index: every blob present, digests and
	// sizes right, diff IDs those of the layers.
	idx, cleanup, err := readArchive(out)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := validate.Index(idx); err != nil {
		t.Errorf("invalid index: %v", err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		entries[h.Name] = b
	}
	if got := string(entries["oci-layout"]); !strings.Contains(got, `"imageLayoutVersion":"1.0.0"`) && !strings.Contains(got, `"imageLayoutVersion": "1.0.0"`) {
		t.Errorf("oci-layout: %q", got)
	}
	var index v1.IndexManifest
	if err := json.Unmarshal(entries["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Manifests) != 1 {
		t.Fatalf("index.json has %d entries, want 1 (podman reads a single nested index)", len(index.Manifests))
	}
	top := index.Manifests[0]
	ref := o.ref("fn-a")
	if !top.MediaType.IsIndex() || top.Digest != digest ||
		top.Annotations[containerdImageName] != ref || top.Annotations[ociRefName] != ref {
		t.Errorf("index.json entry %+v, want the image index %s named %s", top, digest, ref)
	}
	var nested v1.IndexManifest
	if err := json.Unmarshal(entries[blobPath(digest)], &nested); err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, m := range nested.Manifests {
		platforms = append(platforms, m.Platform.String())
		if m.ArtifactType != "" {
			t.Errorf("%s: artifactType %q on an image", m.Platform, m.ArtifactType)
		}
	}
	if strings.Join(platforms, ",") != "linux/amd64,linux/arm64" {
		t.Errorf("platforms %v", platforms)
	}
	var dm []dockerManifest
	if err := json.Unmarshal(entries["manifest.json"], &dm); err != nil {
		t.Fatal(err)
	}
	if len(dm) != 1 || len(dm[0].RepoTags) != 1 || dm[0].RepoTags[0] != ref {
		t.Fatalf("manifest.json %+v, want one image tagged %s", dm, ref)
	}
	var amd v1.Manifest
	if err := json.Unmarshal(entries[blobPath(nested.Manifests[0].Digest)], &amd); err != nil {
		t.Fatal(err)
	}
	if dm[0].Config != blobPath(amd.Config.Digest) || len(dm[0].Layers) != len(amd.Layers) {
		t.Errorf("manifest.json %+v does not name the linux/amd64 image %+v", dm[0], amd)
	}
	for _, l := range dm[0].Layers {
		zr, err := gzip.NewReader(bytes.NewReader(entries[l]))
		if err != nil {
			t.Fatalf("layer %s: %v", l, err)
		}
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Fatalf("layer %s: %v", l, err)
		}
	}
	for p, b := range entries {
		if hex, ok := strings.CutPrefix(p, "blobs/sha256/"); ok && hex != "" {
			h, _, _ := v1.SHA256(bytes.NewReader(b))
			if h.Hex != hex {
				t.Errorf("%s holds sha256:%s", p, h.Hex)
			}
		}
	}
}

func TestPush(t *testing.T) {
	out, _, digest := writeTestArchive(t)
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	repo := u.Host + "/team"
	if err := run(context.Background(), []string{"push", "-registry", repo, "-tag", "t1", out}); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(repo + "/fn-a:t1")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := idx.Digest(); d != digest {
		t.Errorf("the registry holds %s, the archive %s", d, digest)
	}
	if err := validate.Index(idx); err != nil {
		t.Error(err)
	}
}

func TestPushNeedsARegistry(t *testing.T) {
	err := run(context.Background(), []string{"push", "-tag", "t1", "does-not-exist.tar"})
	if err == nil || !strings.Contains(err.Error(), "no registry given") {
		t.Errorf("push without -registry: %v", err)
	}
}

func TestBaseMustBePinned(t *testing.T) {
	o, _ := testOptions(t)
	_, err := resolveBase(context.Background(), "gcr.io/distroless/static-debian12:nonroot", o)
	if err == nil || !strings.Contains(err.Error(), "pinned") {
		t.Errorf("a base without a digest: %v", err)
	}
}

func TestParseSpec(t *testing.T) {
	for _, bad := range []string{"fn", "image:x", "function:", "function:a/b"} {
		if _, err := parseSpec(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if s, err := parseSpec("pause:fleetpolicy-pause"); err != nil || s != (spec{kindPause, "fleetpolicy-pause"}) {
		t.Errorf("pause:fleetpolicy-pause parsed as %v, %v", s, err)
	}
	if s, err := parseSpec("controller:fleetpolicy-hub"); err != nil || s != (spec{kindController, "fleetpolicy-hub"}) {
		t.Errorf("controller:fleetpolicy-hub: %v %v", s, err)
	}
}

// TestPulledBase builds on a base pulled by digest from a registry (an
// in-memory one): its layers come first, its digest is recorded, and a base
// without an image for a platform is refused.
func TestPulledBase(t *testing.T) {
	o, bins := testOptions(t)
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	// The local base of each platform stands in for a distroless base.
	b := localBaseSet(t, o)
	var imgs []v1.Image
	for _, p := range o.Platforms {
		img, _, err := b.image(p, nonroot)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	idx, err := newPlatformIndex(imgs, o.Platforms, nil)
	if err != nil {
		t.Fatal(err)
	}
	baseRepo := u.Host + "/distroless/static"
	tag, err := name.NewTag(baseRepo + ":nonroot")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
	d, _ := idx.Digest()

	pulled, err := resolveBase(context.Background(), baseRepo+":nonroot@"+d.String(), o)
	if err != nil {
		t.Fatal(err)
	}
	img, err := imageFor(o, spec{kindFunction, "fn-a"}, arm64, pulled, bins)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	baseDigest, _ := imgs[1].Digest()
	if got := cf.Config.Labels["org.opencontainers.image.base.digest"]; got != baseDigest.String() {
		t.Errorf("base.digest %s, want the arm64 base's %s", got, baseDigest)
	}
	if got := cf.Config.Labels["org.opencontainers.image.base.name"]; got != baseRepo+":nonroot" {
		t.Errorf("base.name %q", got)
	}
	baseLayers, _ := imgs[1].Layers()
	layers, _ := img.Layers()
	if len(layers) != len(baseLayers)+1 {
		t.Fatalf("%d layers on a base of %d, want one more", len(layers), len(baseLayers))
	}
	bd, _ := baseLayers[0].Digest()
	if ld, _ := layers[0].Digest(); ld != bd {
		t.Errorf("the first layer is %s, not the base's %s", ld, bd)
	}

	// A single-platform base cannot serve two platforms.
	single := u.Host + "/single"
	st, _ := name.NewTag(single + ":amd64")
	if err := remote.Write(st, imgs[0]); err != nil {
		t.Fatal(err)
	}
	sd, _ := imgs[0].Digest()
	if _, err := resolveBase(context.Background(), single+"@"+sd.String(), o); err == nil || !strings.Contains(err.Error(), "has no image for linux/arm64") {
		t.Errorf("a base without linux/arm64: %v", err)
	}
}
