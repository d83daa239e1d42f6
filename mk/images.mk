# Container images, built without a Docker engine (and without pulling
# anything, unless IMAGE_BASE names a base) by hack/imagebuild, a small Go
# program on go-containerregistry: its doc.go states what each image holds,
# the base, the SBOM and the archive format. Included by the Makefile after
# CONTROLLER_BINARIES and FUNCTION_BINARIES, so that every binary `make build`
# produces has an image, except the programs below that only run on a
# developer machine. functions/internal/imagetest builds one image through
# this file and checks it.
#
# Each image is written, for linux/amd64 and linux/arm64, as the archive
# bin/images/<name>.tar, which `docker load`, `podman load` and
# `ctr images import` accept (README "Images").

# IMAGE_REGISTRY names the images in the archives (default ghcr.io/fleetpolicy)
# and is where `make images-push` pushes: it must be given there.
IMAGE_REGISTRY  ?=
IMAGE_TAG       ?= dev
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
# A pulled base image, pinned: REF@sha256:DIGEST. Empty: a base made here from
# the machine's CA bundle and an /etc/passwd and /etc/group (no pull). Every
# image is built on it, the Argo CD sidecar too: it needs no shell.
IMAGE_BASE      ?=
IMAGE_CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
IMAGE_OUT       ?= $(BIN)/images
IMAGE_VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE_REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# Creation time of the images and of every file in them: the commit's, so that
# a build of the same commit with the same Go toolchain and CA bundle (the
# local base's) gives the same digests.
IMAGE_CREATED   ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

# controllers/cmd programs that drive local API servers and never run in a
# cluster; and the console, which so far runs beside its viewer (a workstation,
# or behind an authenticating proxy with --identity token): no manifest deploys
# it yet, and an image of it would only add to `make e2e`'s build.
IMAGELESS_BINARIES := fleetpolicy-bench fleetpolicy-demo fleetpolicy-console
CONTROLLER_IMAGES  := $(filter-out $(IMAGELESS_BINARIES),$(CONTROLLER_BINARIES))
FUNCTION_IMAGES    := $(FUNCTION_BINARIES)
CMP_IMAGE          := fleetpolicy-argocd-cmp
# The sandbox image of the e2e node's pods (hack/node/pause; mk/node.mk).
PAUSE_IMAGE        := fleetpolicy-pause
IMAGES             := $(FUNCTION_IMAGES) $(CONTROLLER_IMAGES) $(CMP_IMAGE) $(PAUSE_IMAGE)
# What hack/imagebuild builds for each image: KIND:NAME.
IMAGE_SPECS        := $(addprefix function:,$(FUNCTION_IMAGES)) $(addprefix controller:,$(CONTROLLER_IMAGES)) argocd-cmp:$(CMP_IMAGE) pause:$(PAUSE_IMAGE)

IMAGEBUILD := $(BIN)/imagebuild
IMAGEBUILD_FLAGS = -root $(CURDIR) -out $(IMAGE_OUT) -registry $(or $(IMAGE_REGISTRY),ghcr.io/fleetpolicy) \
	-tag $(IMAGE_TAG) -version $(IMAGE_VERSION) -revision $(IMAGE_REVISION) -created $(IMAGE_CREATED) \
	-platforms $(IMAGE_PLATFORMS) -ca-bundle $(IMAGE_CA_BUNDLE) \
	$(if $(IMAGE_BASE),-base $(IMAGE_BASE))

$(IMAGEBUILD): $(filter-out %_test.go,$(wildcard hack/imagebuild/*.go)) hack/imagebuild/go.mod hack/imagebuild/go.sum
	GOWORK=off go build -C hack/imagebuild -o $@ .

##@ Images

.PHONY: images
images: $(IMAGEBUILD) ## Build every image (each KRM function, hub, spoke, Argo CD sidecar, the e2e node's pause; amd64 and arm64) into bin/images/<name>.tar with no Docker engine; one alone: make image/<name>.
	$(IMAGEBUILD) build $(IMAGEBUILD_FLAGS) $(IMAGE_SPECS)

.PHONY: $(addprefix image/,$(IMAGES))
$(addprefix image/,$(IMAGES)): image/%: $(IMAGEBUILD) ## Build one image into bin/images/<name>.tar (make image/fleetpolicy-hub).
	$(IMAGEBUILD) build $(IMAGEBUILD_FLAGS) $(filter %:$*,$(IMAGE_SPECS))

.PHONY: images-push
images-push: ## Build every image and push it to IMAGE_REGISTRY (required) as <name>:IMAGE_TAG.
	@if [ -z "$(IMAGE_REGISTRY)" ]; then \
	  echo "make images-push needs a registry: make images-push IMAGE_REGISTRY=<registry>/<namespace> [IMAGE_TAG=<tag>]"; \
	  echo "(for example IMAGE_REGISTRY=registry.example.com/fleetpolicy); nothing was built or pushed."; \
	  exit 1; fi >&2
	@$(MAKE) --no-print-directory images IMAGE_REGISTRY=$(IMAGE_REGISTRY) IMAGE_TAG=$(IMAGE_TAG)
	$(IMAGEBUILD) push -registry $(IMAGE_REGISTRY) -tag $(IMAGE_TAG) $(addprefix $(IMAGE_OUT)/,$(addsuffix .tar,$(IMAGES)))
