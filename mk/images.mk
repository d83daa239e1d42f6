# Container images, built with docker from the Dockerfiles in build/ (the build
# context is the repository root). Included by the Makefile after
# CONTROLLER_BINARIES and FUNCTION_BINARIES, so that every binary `make build`
# produces has an image, except the programs below that only run on a
# developer machine. functions/internal/imagetest checks the Dockerfiles and
# this list.
#
# The development machines and CI have no Docker engine: there `make images`
# stops with a message before building anything.

IMAGE_REGISTRY ?= ghcr.io/fleetpolicy
IMAGE_TAG      ?= dev
DOCKER         ?= docker

# controllers/cmd programs that drive local API servers and never run in a cluster.
IMAGELESS_BINARIES := fleetpolicy-bench fleetpolicy-demo
CONTROLLER_IMAGES  := $(filter-out $(IMAGELESS_BINARIES),$(CONTROLLER_BINARIES))
FUNCTION_IMAGES    := $(FUNCTION_BINARIES)
CMP_IMAGE          := fleetpolicy-argocd-cmp

##@ Images

.PHONY: images
images: $(addprefix image/,$(FUNCTION_IMAGES) $(CONTROLLER_IMAGES) $(CMP_IMAGE)) ## Build every container image with docker (needs a Docker engine): one per KRM function, hub and spoke, the Argo CD plugin sidecar.

.PHONY: docker-engine
docker-engine: ## Fail unless docker reaches a Docker engine (make images needs one).
	@$(DOCKER) info >/dev/null 2>&1 || { \
	  echo "make images needs a Docker engine, and '$(DOCKER) info' cannot reach one."; \
	  echo "Start Docker (or set DOCKER= to a compatible CLI) and rerun; nothing was built."; \
	  exit 1; } >&2

.PHONY: $(addprefix image/,$(FUNCTION_IMAGES) $(CONTROLLER_IMAGES) $(CMP_IMAGE))

$(addprefix image/,$(FUNCTION_IMAGES)): image/%: docker-engine
	$(DOCKER) build -f build/function.Dockerfile --build-arg FUNCTION=$* -t $(IMAGE_REGISTRY)/$*:$(IMAGE_TAG) .

$(addprefix image/,$(CONTROLLER_IMAGES)): image/%: docker-engine
	$(DOCKER) build -f build/controller.Dockerfile --build-arg CONTROLLER=$* -t $(IMAGE_REGISTRY)/$*:$(IMAGE_TAG) .

image/$(CMP_IMAGE): docker-engine
	$(DOCKER) build -f build/argocd-cmp.Dockerfile -t $(IMAGE_REGISTRY)/$(CMP_IMAGE):$(IMAGE_TAG) .
