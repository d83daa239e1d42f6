// Package imagetest keeps the container images buildable and safe while no
// Docker engine is around to build them (the development machines and CI have
// none). It holds tests only, which read build/*.Dockerfile and ask make:
//
//   - every Dockerfile parses, its final stage starts from a static distroless
//     base, runs as a numeric non-root user and has an exec-form ENTRYPOINT;
//     every `go build` is CGO_ENABLED=0; every file it copies from the build
//     context exists; its .dockerignore keeps bin/ and .git/ out of the
//     context;
//   - `make -n images` builds an image for every binary `make build` produces
//     (except the developer-machine programs the test names), plus the Argo CD
//     plugin sidecar, and uses every Dockerfile;
//   - `make images` without a Docker engine stops with a message before
//     building anything;
//   - the sidecar image, the repo-server patch of examples/argocd and the tag
//     make builds agree (user 999, plugin.yaml's path, image name).
package imagetest
