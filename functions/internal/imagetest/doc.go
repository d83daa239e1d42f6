// Package imagetest keeps the container images right. `make images` builds
// them with hack/imagebuild (no Docker engine, no Dockerfile); this package
// holds tests only, which ask make and build through it:
//
//   - `make images` builds an image for every binary `make build` produces
//     (except the developer-machine programs the test names), plus the Argo CD
//     plugin sidecar, and nothing else; build/ holds no Dockerfile, so there is
//     one way to build an image;
//   - `make image/<function>` into a temporary directory (the real tool, the
//     real go build, both platforms) writes an archive that is an OCI image
//     layout with one index.json entry, the image index, named for containerd
//     and podman, and a Docker manifest.json naming one platform's image;
//     every blob's digest and size is right; the index has linux/amd64 and
//     linux/arm64; each image runs as 65532, its entrypoint is the function's
//     binary, a static ELF executable of the platform's architecture; no
//     layer holds a shell; the OCI labels (source, revision = HEAD, version)
//     are set; the SBOM the label names is SPDX and lists every module the
//     binary's build information names; the base has /etc/passwd with 65532
//     and a CA bundle (the static-ELF check is itself shown to refuse a
//     dynamically linked binary, the machine's ls);
//   - where `ctr` and a containerd socket are on the machine, the archive
//     imports with `ctr images import` (skipped otherwise);
//   - `make images-push` without IMAGE_REGISTRY stops with a message before
//     building anything;
//   - the repo-server patch of examples/argocd runs the sidecar image make
//     builds, as user 999.
//
// The image build is skipped under -short: it runs go build for two
// platforms (warm: seconds; cold: minutes, the go build cache is shared with
// `make images`).
package imagetest
