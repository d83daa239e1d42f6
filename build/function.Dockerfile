# syntax=docker/dockerfile:1
# One fleetpolicy KRM function as a container image, the packaging the KRM
# function specification asks for: kpt (`image:` in a Kptfile pipeline) and
# kustomize (`container:` in config.kubernetes.io/function) run it with a
# ResourceList on stdin, as a non-root user, without network. `make images`
# builds one per functions/<name>; by hand, from the repository root:
#
#   docker build -f build/function.Dockerfile --build-arg FUNCTION=validate-dependencies \
#     -t ghcr.io/fleetpolicy/validate-dependencies:dev .

ARG GO_IMAGE=golang:1.26

FROM ${GO_IMAGE} AS build
ARG FUNCTION
WORKDIR /src
# go.work builds the modules together; the controllers module needs only its
# go.mod and go.sum to be part of the workspace.
COPY go.work go.work.sum ./
COPY controllers/go.mod controllers/go.sum controllers/
COPY shared/ shared/
COPY functions/ functions/
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    test -f "functions/${FUNCTION}/main.go" || { echo "--build-arg FUNCTION=<name of a functions/ folder> is required" >&2; exit 1; }; \
    CGO_ENABLED=0 go build -C functions -trimpath -o /out/function "./${FUNCTION}"

# Static binary, no shell, uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
ARG FUNCTION
LABEL org.opencontainers.image.title="${FUNCTION}" \
      org.opencontainers.image.description="fleetpolicy KRM function ${FUNCTION}" \
      org.opencontainers.image.source="https://github.com/fleetpolicy/fleetpolicy"
COPY --from=build /out/function /usr/local/bin/function
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/function"]
