package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

const usage = `usage:
  imagebuild build [flags] KIND:NAME...   (KIND: function, controller, argocd-cmp, pause)
  imagebuild push -registry REGISTRY [-tag TAG] ARCHIVE...
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("no command\n" + usage)
	}
	switch args[0] {
	case "build":
		return buildCommand(ctx, args[1:])
	case "push":
		return pushCommand(ctx, args[1:])
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
}

func buildCommand(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	var (
		o         buildOptions
		platforms = fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms to build for")
		dockerPl  = fs.String("docker-platform", "", "platform whose image manifest.json names, for Docker's classic image store (default: this machine's if built, else the first)")
		created   = fs.String("created", "", "creation time of the images and their files, Unix seconds (the Makefile passes the commit time of HEAD; default 0)")
	)
	fs.StringVar(&o.Root, "root", ".", "repository root")
	fs.StringVar(&o.Out, "out", "bin/images", "directory the archives are written to")
	fs.StringVar(&o.Cache, "cache", "", "directory for the built binaries (default OUT/.build)")
	fs.StringVar(&o.Registry, "registry", "ghcr.io/fleetpolicy", "registry and namespace of the image references in the archives")
	fs.StringVar(&o.Tag, "tag", "dev", "tag of the image references in the archives")
	fs.StringVar(&o.Version, "version", "dev", "version: org.opencontainers.image.version and the SBOM's")
	fs.StringVar(&o.Revision, "revision", "", "git commit: org.opencontainers.image.revision (required)")
	fs.StringVar(&o.Source, "source", "https://github.com/fleetpolicy/fleetpolicy", "org.opencontainers.image.source")
	fs.StringVar(&o.Base, "base", "", "base image REF@sha256:DIGEST, pulled (default: a base made here, nothing pulled)")
	fs.StringVar(&o.CABundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA bundle of the local base")
	fs.StringVar(&o.GoCommand, "go", "go", "go command")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("build: name at least one image, KIND:NAME\n" + usage)
	}
	if o.Revision == "" {
		return errors.New("build: -revision (the git commit) is required")
	}
	for _, a := range fs.Args() {
		s, err := parseSpec(a)
		if err != nil {
			return err
		}
		o.Specs = append(o.Specs, s)
	}
	for _, p := range strings.Split(*platforms, ",") {
		pl, err := v1.ParsePlatform(strings.TrimSpace(p))
		if err != nil || pl.OS != "linux" || pl.Architecture == "" {
			return fmt.Errorf("build: -platforms: %q is not a linux/ARCH platform", p)
		}
		o.Platforms = append(o.Platforms, *pl)
	}
	o.DockerPlatform = o.Platforms[0]
	if *dockerPl != "" {
		pl, err := v1.ParsePlatform(*dockerPl)
		if err != nil {
			return fmt.Errorf("build: -docker-platform: %w", err)
		}
		if !hasPlatform(o.Platforms, *pl) {
			return fmt.Errorf("build: -docker-platform %s is not one of -platforms", *dockerPl)
		}
		o.DockerPlatform = *pl
	} else if host := (v1.Platform{OS: "linux", Architecture: runtime.GOARCH}); hasPlatform(o.Platforms, host) {
		o.DockerPlatform = host
	}
	switch {
	case *created != "":
		sec, err := strconv.ParseInt(*created, 10, 64)
		if err != nil {
			return fmt.Errorf("build: -created: %w", err)
		}
		o.Created = time.Unix(sec, 0).UTC()
	default:
		o.Created = time.Unix(0, 0).UTC()
	}
	if o.Cache == "" {
		o.Cache = filepath.Join(o.Out, ".build")
	}
	return build(ctx, o)
}

func hasPlatform(ps []v1.Platform, p v1.Platform) bool {
	for _, q := range ps {
		if q.OS == p.OS && q.Architecture == p.Architecture && q.Variant == p.Variant {
			return true
		}
	}
	return false
}

func pushCommand(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	registry := fs.String("registry", "", "registry and namespace to push to, e.g. registry.example.com/fleetpolicy (required)")
	tag := fs.String("tag", "dev", "tag to push")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *registry == "" {
		return errors.New("push: no registry given: set IMAGE_REGISTRY=<registry>/<namespace> (make images-push IMAGE_REGISTRY=registry.example.com/fleetpolicy)")
	}
	if fs.NArg() == 0 {
		return errors.New("push: name at least one archive")
	}
	for _, path := range fs.Args() {
		ref, digest, err := push(ctx, path, *registry, *tag)
		if err != nil {
			return err
		}
		fmt.Printf("pushed %s@%s\n", ref, digest)
	}
	return nil
}
