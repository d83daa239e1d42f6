package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Kinds of image.
const (
	kindFunction   = "function"
	kindController = "controller"
	kindCMP        = "argocd-cmp"
	kindPause      = "pause"
)

// Users the images run as.
var (
	nonroot = user{Name: "nonroot", UID: 65532, Home: "/home/nonroot"}
	argocd  = user{Name: "argocd", UID: 999, Home: "/home/argocd"}
)

const (
	binDir        = "/usr/local/bin"
	sbomDir       = "/usr/share/sbom"
	sbomLabel     = "io.fleetpolicy.image.sbom"
	cmpConfigPath = "/home/argocd/cmp-server/config/plugin.yaml"
	cmpEntrypoint = "/var/run/argocd/argocd-cmp-server"
	cmpPluginYAML = "examples/argocd/plugin.yaml"
	cmpGenerate   = "functions/cmd/fleetpolicy-cmp-generate"
	kustomizeMod  = "hack/tools/kustomize"
	kustomizePkg  = "sigs.k8s.io/kustomize/kustomize/v5"
	pauseMod      = "hack/node/pause"
	pauseBinary   = "pause"
)

// spec is one image to build: KIND:NAME.
type spec struct{ Kind, Name string }

func parseSpec(s string) (spec, error) {
	kind, name, ok := strings.Cut(s, ":")
	if !ok || name == "" || strings.ContainsAny(name, "/\\ ") {
		return spec{}, fmt.Errorf("%q: want KIND:NAME, KIND one of %s, %s, %s, %s", s, kindFunction, kindController, kindCMP, kindPause)
	}
	switch kind {
	case kindFunction, kindController, kindCMP, kindPause:
		return spec{kind, name}, nil
	}
	return spec{}, fmt.Errorf("%q: unknown kind %q (want %s, %s, %s or %s)", s, kind, kindFunction, kindController, kindCMP, kindPause)
}

type buildOptions struct {
	Root, Out, Cache          string
	Registry, Tag             string
	Version, Revision, Source string
	Base, CABundle            string
	GoCommand                 string
	Created                   time.Time
	Platforms                 []v1.Platform
	DockerPlatform            v1.Platform
	Specs                     []spec
}

// ref is the full reference of the image name in the archives.
func (o buildOptions) ref(name string) string {
	return strings.TrimSuffix(o.Registry, "/") + "/" + name + ":" + o.Tag
}

func build(ctx context.Context, o buildOptions) error {
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return err
	}
	o.Root = root
	pkgs, extra, err := packages(o)
	if err != nil {
		return err
	}
	b, err := resolveBase(ctx, o.Base, o)
	if err != nil {
		return err
	}
	bins := map[string]string{} // "os/arch" -> directory of its binaries
	for _, p := range o.Platforms {
		dir := filepath.Join(o.Cache, p.OS+"-"+p.Architecture)
		if err := goBuild(ctx, o, p, dir, pkgs, extra); err != nil {
			return err
		}
		bins[p.OS+"/"+p.Architecture] = dir
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	for _, s := range o.Specs {
		start := time.Now()
		var images []v1.Image
		var dockerImage v1.Image
		for _, p := range o.Platforms {
			img, err := imageFor(o, s, p, b, bins[p.OS+"/"+p.Architecture])
			if err != nil {
				return fmt.Errorf("%s %s: %w", s.Name, p, err)
			}
			images = append(images, img)
			if p.OS == o.DockerPlatform.OS && p.Architecture == o.DockerPlatform.Architecture {
				dockerImage = img
			}
		}
		idx, err := newPlatformIndex(images, o.Platforms, o.annotations(s))
		if err != nil {
			return err
		}
		out := filepath.Join(o.Out, s.Name+".tar")
		if err := writeArchive(out, o.ref(s.Name), idx, dockerImage); err != nil {
			return fmt.Errorf("%s: %w", out, err)
		}
		d, _ := idx.Digest()
		fmt.Printf("%s: %s@%s (%s, %s)\n", out, o.ref(s.Name), d, platformList(o.Platforms), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

func platformList(ps []v1.Platform) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, ", ")
}

func descriptorOf(img v1.Image, p v1.Platform) (v1.Descriptor, error) {
	d, err := img.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	size, err := img.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	pl := p
	return v1.Descriptor{MediaType: mt, Digest: d, Size: size, Platform: &pl}, nil
}

// moduleBuilds says which binaries built in modules of their own (outside the
// workspace, GOWORK=off) the specs need.
type moduleBuilds struct{ Kustomize, Pause bool }

// packages lists the workspace packages to build (relative to the root, as
// ./dir) and the binaries built in their own modules.
func packages(o buildOptions) (pkgs []string, extra moduleBuilds, err error) {
	seen := map[string]bool{}
	add := func(dir string) error {
		if _, err := os.Stat(filepath.Join(o.Root, filepath.FromSlash(dir), "main.go")); err != nil {
			return fmt.Errorf("no main package at %s: %w", dir, err)
		}
		if !seen[dir] {
			seen[dir] = true
			pkgs = append(pkgs, "./"+dir)
		}
		return nil
	}
	for _, s := range o.Specs {
		switch s.Kind {
		case kindFunction:
			err = add("functions/" + s.Name)
		case kindController:
			err = add("controllers/cmd/" + s.Name)
		case kindPause:
			extra.Pause = true
		case kindCMP:
			extra.Kustomize = true
			var fns []string
			if fns, err = functionDirs(o.Root); err != nil {
				return nil, extra, err
			}
			for _, f := range append(fns, cmpGenerate) {
				if err = add(f); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, extra, err
		}
	}
	sort.Strings(pkgs)
	return pkgs, extra, nil
}

// functionDirs are functions/NAME for every functions/*/main.go, as the
// Makefile's FUNCTION_BINARIES.
func functionDirs(root string) ([]string, error) {
	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, m := range mains {
		dirs = append(dirs, "functions/"+filepath.Base(filepath.Dir(m)))
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no functions/*/main.go under %s", root)
	}
	return dirs, nil
}

// goBuild builds pkgs (and kustomize, pause) for platform p into dir: static
// (CGO_ENABLED=0), -trimpath, -ldflags "-s -w".
func goBuild(ctx context.Context, o buildOptions, p v1.Platform, dir string, pkgs []string, extra moduleBuilds) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	env := append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if p.Variant != "" && p.Architecture == "arm" {
		env = append(env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	const ldflags = "-s -w"
	run := func(dir string, extraEnv []string, args ...string) error {
		cmd := exec.CommandContext(ctx, o.GoCommand, args...)
		cmd.Dir = dir
		cmd.Env = append(env, extraEnv...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		fmt.Fprintf(os.Stderr, ">> %s: go %s\n", p, strings.Join(args, " "))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go %s (for %s): %w", strings.Join(args, " "), p, err)
		}
		return nil
	}
	if len(pkgs) > 0 {
		args := append([]string{"build", "-trimpath", "-ldflags", ldflags, "-o", dir + string(filepath.Separator)}, pkgs...)
		if err := run(o.Root, nil, args...); err != nil {
			return err
		}
	}
	if extra.Kustomize {
		// kustomize keeps the version its module pins in its own build info.
		if err := run(filepath.Join(o.Root, kustomizeMod), []string{"GOWORK=off"},
			"build", "-trimpath", "-ldflags", ldflags, "-o", filepath.Join(dir, "kustomize"), kustomizePkg); err != nil {
			return err
		}
	}
	if extra.Pause {
		if err := run(filepath.Join(o.Root, filepath.FromSlash(pauseMod)), []string{"GOWORK=off"},
			"build", "-trimpath", "-ldflags", ldflags, "-o", filepath.Join(dir, pauseBinary), "."); err != nil {
			return err
		}
	}
	return nil
}

func (o buildOptions) annotations(s spec) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    s.Name,
		"org.opencontainers.image.source":   o.Source,
		"org.opencontainers.image.revision": o.Revision,
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.created":  o.Created.Format(time.RFC3339),
	}
}

func description(s spec) string {
	switch s.Kind {
	case kindFunction:
		return "fleetpolicy KRM function " + s.Name
	case kindController:
		return "fleetpolicy controller " + s.Name
	case kindPause:
		return "pause: the sandbox container of the e2e node's pods (hack/node/pause)"
	default:
		return "Argo CD config management plugin sidecar: kustomize with fleetpolicy's KRM functions"
	}
}

// imageFor assembles the image of s for platform p on base b from the
// binaries in bins.
func imageFor(o buildOptions, s spec, p v1.Platform, b *baseSet, bins string) (v1.Image, error) {
	u := nonroot
	if s.Kind == kindCMP {
		u = argocd
	}
	base, baseDigest, err := b.image(p, u)
	if err != nil {
		return nil, err
	}
	mtime := o.Created
	var files []entry
	var binaries []string // paths in the image, in the order of the SBOM
	addBin := func(name string) {
		files = append(files, entry{Path: path.Join(binDir, name), Mode: 0o755, Src: filepath.Join(bins, name)})
		binaries = append(binaries, name)
	}
	cfgUser := fmt.Sprintf("%d:%d", u.UID, u.UID)
	var entrypoint, env []string
	workdir := u.Home
	var layers []v1.Layer
	switch s.Kind {
	case kindFunction, kindController:
		addBin(s.Name)
		entrypoint = []string{path.Join(binDir, s.Name)}
		env = []string{"PATH=" + binDir + ":/usr/bin:/bin"}
	case kindPause:
		addBin(pauseBinary)
		entrypoint = []string{path.Join(binDir, pauseBinary)}
		env = []string{"PATH=" + binDir + ":/usr/bin:/bin"}
	case kindCMP:
		// kustomize alone in a layer of its own: it changes only with its pin.
		k, err := newLayer([]entry{{Path: path.Join(binDir, "kustomize"), Mode: 0o755, Src: filepath.Join(bins, "kustomize")}}, mtime)
		if err != nil {
			return nil, err
		}
		layers = append(layers, k)
		binaries = append(binaries, "kustomize")
		fns, err := functionDirs(o.Root)
		if err != nil {
			return nil, err
		}
		for _, f := range append(fns, cmpGenerate) {
			addBin(path.Base(f))
		}
		files = append(files,
			entry{Path: argocd.Home, Dir: true, Mode: 0o755, UID: argocd.UID, GID: argocd.UID},
			entry{Path: path.Dir(path.Dir(cmpConfigPath)), Dir: true, Mode: 0o755, UID: argocd.UID, GID: argocd.UID},
			entry{Path: path.Dir(cmpConfigPath), Dir: true, Mode: 0o755, UID: argocd.UID, GID: argocd.UID},
			entry{Path: cmpConfigPath, Mode: 0o644, Src: filepath.Join(o.Root, filepath.FromSlash(cmpPluginYAML))},
		)
		entrypoint = []string{cmpEntrypoint}
		// argocd-cmp-server runs plugin.yaml's commands, all of them
		// fleetpolicy-cmp-generate, from PATH.
		env = []string{"PATH=" + binDir + ":/usr/bin:/bin", "HOME=" + argocd.Home}
	}
	var binPaths []string
	for _, n := range binaries {
		binPaths = append(binPaths, filepath.Join(bins, n))
	}
	sbomPath := path.Join(sbomDir, s.Name+".spdx.json")
	sbom, err := spdxSBOM(s.Name, o, p, binPaths, binDir)
	if err != nil {
		return nil, err
	}
	files = append(files, entry{Path: sbomPath, Mode: 0o644, Data: sbom})
	app, err := newLayer(files, mtime)
	if err != nil {
		return nil, err
	}
	layers = append(layers, app)

	img := base
	for _, l := range layers {
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:     l,
			MediaType: types.OCILayer,
			History:   v1.History{Created: v1.Time{Time: mtime}, CreatedBy: "imagebuild " + s.Kind + ":" + s.Name, Comment: "fleetpolicy"},
		})
		if err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: mtime}
	cf.Author = "fleetpolicy"
	cf.Config.User = cfgUser
	cf.Config.Entrypoint = entrypoint
	cf.Config.Cmd = nil
	cf.Config.Env = mergeEnv(cf.Config.Env, env)
	cf.Config.WorkingDir = workdir
	labels := o.annotations(s)
	labels["org.opencontainers.image.description"] = description(s)
	labels["org.opencontainers.image.base.name"] = b.name
	labels["org.opencontainers.image.base.digest"] = baseDigest.String()
	labels[sbomLabel] = sbomPath
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	for k, v := range labels {
		cf.Config.Labels[k] = v
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	ann := o.annotations(s)
	ann["org.opencontainers.image.base.name"] = b.name
	ann["org.opencontainers.image.base.digest"] = baseDigest.String()
	return mutate.Annotations(img, ann).(v1.Image), nil
}

// mergeEnv sets the variables of set over base.
func mergeEnv(base, set []string) []string {
	out := []string{}
	names := map[string]bool{}
	for _, kv := range set {
		n, _, _ := strings.Cut(kv, "=")
		names[n] = true
	}
	for _, kv := range base {
		if n, _, _ := strings.Cut(kv, "="); !names[n] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
