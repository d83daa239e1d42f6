// Command imagebuild builds fleetpolicy's container images without a Docker
// engine and pushes them. `make images` and `make images-push` run it; it is
// its own module (GOWORK=off), like bench/report, so that the product's
// modules do not depend on go-containerregistry.
//
// # Contract
//
// `imagebuild build [flags] KIND:NAME...` builds one image per argument, for
// every platform of -platforms (default linux/amd64 and linux/arm64), and
// writes each as OUT/NAME.tar. KIND is
//
//   - function: the KRM function functions/NAME, at /usr/local/bin/NAME;
//   - controller: the controller controllers/cmd/NAME, at /usr/local/bin/NAME;
//   - argocd-cmp: the Argo CD config management plugin sidecar: kustomize (at
//     the version hack/tools/kustomize pins), every KRM function and
//     fleetpolicy-cmp-generate in /usr/local/bin (on the image's PATH),
//     examples/argocd/plugin.yaml at
//     /home/argocd/cmp-server/config/plugin.yaml, user 999, entrypoint
//     /var/run/argocd/argocd-cmp-server (Argo CD's copyutil puts it there).
//     Every command plugin.yaml names (init, generate, discover) is
//     fleetpolicy-cmp-generate, so the sidecar, like every image, holds no
//     shell and needs none.
//   - pause: the sandbox ("pause") container of the e2e node's pods
//     (`make e2e`): hack/node/pause, a module of its own built with
//     GOWORK=off, at /usr/local/bin/pause, user 65532. NAME is the image's
//     name (the Makefile's is fleetpolicy-pause).
//
// Every binary is built by `go build` from the repository (-root) with
// CGO_ENABLED=0, GOOS/GOARCH of the platform, -trimpath and
// -ldflags "-s -w" (the version is in the labels and the SBOM), kustomize
// with "-s -w" in its own tool module; the go build cache is
// shared with every other build. Function and controller images run as
// 65532:65532 and hold no shell: the base plus one layer with the binary and
// the SBOM. Every time in an image (config, history, file mtimes) is -created
// (the Makefile passes the commit time) and every layer is written in a fixed
// order, so a rebuild of the same commit gives the same digests.
//
// Each image carries the OCI labels org.opencontainers.image.{title,
// description,source,revision,version,created,base.name,base.digest}; the
// manifests carry the same keys as annotations. Each platform's image holds
// an SPDX 2.3 JSON SBOM at /usr/share/sbom/NAME.spdx.json, named by the label
// io.fleetpolicy.image.sbom: one package per Go module every binary of the
// image was linked from (read from the binaries' own build information, as
// `go version -m` prints it), the Go standard library, and the binaries.
//
// # Base image
//
// Without -base the images are built on a base made here, not pulled: one
// layer with /etc/passwd and /etc/group (root, nobody, nonroot 65532; argocd
// 999 in the sidecar), the CA bundle of -ca-bundle (default the machine's
// /etc/ssl/certs/ca-certificates.crt), /tmp (1777) and the users' home
// directories. It is deterministic for a given CA bundle: its digest is
// recorded as org.opencontainers.image.base.digest (base.name
// "fleetpolicy.io/local-base"). With -base REF@sha256:DIGEST the base is
// pulled with go-containerregistry's remote package (credentials from the
// Docker config, as docker login writes it); a reference without a digest is
// refused, so that a build is pinned. Every image, the sidecar included, is
// built on the same base.
//
// # Archive
//
// OUT/NAME.tar is an OCI image layout (oci-layout, index.json, blobs/sha256/)
// whose index.json has exactly one descriptor, the image index of all
// platforms, annotated with the image's full reference (REGISTRY/NAME:TAG) as
// both io.containerd.image.name and org.opencontainers.image.ref.name; plus a
// Docker manifest.json naming the image of one platform (-docker-platform,
// default the build machine's) with the same reference in RepoTags. That is
// the shape `docker save` writes since Docker 25:
//
//   - containerd (`ctr images import`) reads oci-layout + index.json and takes
//     the name from io.containerd.image.name (manifest.json is ignored when an
//     oci-layout file is present);
//   - Docker 25+ with the containerd image store reads index.json likewise;
//     Docker's classic store reads manifest.json (one platform: a second entry
//     with the same tag would replace the first);
//   - podman reads it as an oci-archive (one top-level descriptor, a nested
//     multi-platform index, named by org.opencontainers.image.ref.name; it
//     loads the platform of the machine) or as a docker-archive.
//
// The archive is written to a temporary file and renamed, so an interrupted
// build never leaves a truncated archive behind.
//
// `imagebuild push -registry REGISTRY [-tag TAG] ARCHIVE...` pushes the image
// index of each archive to REGISTRY/NAME:TAG (NAME from the file name) with
// remote.WriteIndex; without -registry it fails before reading anything.
//
// # Why go-containerregistry and not ko
//
// ko builds one Go binary per image onto a pulled base; the sidecar needs
// several binaries and a configuration file, the local base
// needs a layer of our own, and the archive needs the layout + manifest.json
// shape above, which ko's --tarball (a docker-archive of one platform) does
// not write. All of that is a few calls of go-containerregistry, which ko
// itself is built on.
package main
