# syntax=docker/dockerfile:1
# A fleetpolicy controller (controllers/cmd/<name>: fleetpolicy-hub or
# fleetpolicy-spoke) as a container image. `make images` builds both; by hand,
# from the repository root:
#
#   docker build -f build/controller.Dockerfile --build-arg CONTROLLER=fleetpolicy-hub \
#     -t ghcr.io/fleetpolicy/fleetpolicy-hub:dev .

ARG GO_IMAGE=golang:1.26

FROM ${GO_IMAGE} AS build
ARG CONTROLLER
WORKDIR /src
# go.work builds the modules together; the functions module needs only its
# go.mod and go.sum to be part of the workspace.
COPY go.work go.work.sum ./
COPY functions/go.mod functions/go.sum functions/
COPY shared/ shared/
COPY controllers/ controllers/
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    test -f "controllers/cmd/${CONTROLLER}/main.go" || { echo "--build-arg CONTROLLER=<name of a controllers/cmd/ folder> is required" >&2; exit 1; }; \
    CGO_ENABLED=0 go build -C controllers -trimpath -o /out/controller "./cmd/${CONTROLLER}"

# Static binary, no shell, uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
ARG CONTROLLER
LABEL org.opencontainers.image.title="${CONTROLLER}" \
      org.opencontainers.image.description="fleetpolicy controller ${CONTROLLER}" \
      org.opencontainers.image.source="https://github.com/fleetpolicy/fleetpolicy"
COPY --from=build /out/controller /usr/local/bin/controller
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/controller"]
