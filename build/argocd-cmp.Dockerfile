# syntax=docker/dockerfile:1
# The sidecar of argocd-repo-server that runs fleetpolicy's Argo CD config
# management plugin (examples/argocd): kustomize, every fleetpolicy KRM
# function and the plugin's init and generate commands on PATH (generate
# allows only the functions in its own directory, /usr/local/bin), and the plugin's
# configuration where argocd-cmp-server reads it. argocd-cmp-server itself is not in the image: Argo CD's copyutil
# init container puts it in the var-files volume, mounted at /var/run/argocd.
# `make images` builds it; by hand, from the repository root:
#
#   docker build -f build/argocd-cmp.Dockerfile -t ghcr.io/fleetpolicy/fleetpolicy-argocd-cmp:dev .

ARG GO_IMAGE=golang:1.26

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.work go.work.sum ./
COPY controllers/go.mod controllers/go.sum controllers/
COPY shared/ shared/
COPY functions/ functions/
# kustomize at the version the Makefile pins (hack/tools/kustomize/go.mod).
COPY hack/tools/kustomize/ hack/tools/kustomize/
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    cd functions && \
    CGO_ENABLED=0 go build -trimpath -o /out/ $(for main in */main.go; do echo "./${main%/main.go}"; done) ./cmd/fleetpolicy-cmp-generate && \
    cd ../hack/tools/kustomize && \
    CGO_ENABLED=0 GOWORK=off go build -trimpath -o /out/kustomize sigs.k8s.io/kustomize/kustomize/v5

# Static binaries plus busybox's static sh, env, sed and grep, which the
# plugin's init (fleetpolicy-cmp-init) and discover commands run.
FROM gcr.io/distroless/static-debian12:debug-nonroot
LABEL org.opencontainers.image.title="fleetpolicy-argocd-cmp" \
      org.opencontainers.image.description="Argo CD config management plugin sidecar: kustomize with fleetpolicy's KRM functions" \
      org.opencontainers.image.source="https://github.com/fleetpolicy/fleetpolicy"
COPY --from=build /out/ /usr/local/bin/
COPY --chmod=0755 examples/argocd/fleetpolicy-cmp-init /usr/local/bin/fleetpolicy-cmp-init
COPY examples/argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
ENV PATH=/usr/local/bin:/usr/bin:/bin:/busybox \
    HOME=/home/argocd
WORKDIR /home/argocd
# Argo CD requires the plugin sidecar to run as user 999.
USER 999:999
ENTRYPOINT ["/var/run/argocd/argocd-cmp-server"]
