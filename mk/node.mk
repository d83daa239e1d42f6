# The real node `make e2e` runs on (issue 28): kube-apiserver and etcd (as the
# tests run them) plus kube-controller-manager, kube-scheduler, kubelet and
# kube-proxy, on containerd, runc and the CNI bridge plugin from the machine's
# Debian packages, with every image of bin/images loaded into containerd and a
# pause image built here: nothing is pulled from a registry. hack/node/up.sh and
# hack/node/down.sh say what they start and undo; README "End-to-end suite".
#
# The Kubernetes components are built at KUBE_VERSION from hack/tools/kubernetes
# with the version stamped in (kubelet and kubectl report it), into bin/ under
# names that carry the version, like every tool.

KUBELET        := $(BIN)/kubelet-$(KUBE_VERSION)
KUBE_SCHEDULER := $(BIN)/kube-scheduler-$(KUBE_VERSION)
KUBE_PROXY     := $(BIN)/kube-proxy-$(KUBE_VERSION)
KUBECTL        := $(BIN)/kubectl-$(KUBE_VERSION)

KUBE_VERSION_MAJOR := $(word 1,$(subst ., ,$(patsubst v%,%,$(KUBE_VERSION))))
KUBE_VERSION_MINOR := $(word 2,$(subst ., ,$(patsubst v%,%,$(KUBE_VERSION))))
KUBE_LDFLAGS := -s -w $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version, \
	-X $(p).gitVersion=$(KUBE_VERSION) -X $(p).gitMajor=$(KUBE_VERSION_MAJOR) \
	-X $(p).gitMinor=$(KUBE_VERSION_MINOR) -X $(p).gitTreeState=clean)
KUBE_NODE_BUILD = CGO_ENABLED=0 GOWORK=off go build -C hack/tools/kubernetes -ldflags '$(KUBE_LDFLAGS)' -o $@

$(KUBELET):
	@echo ">> building kubelet $(KUBE_VERSION) (about 2 minutes warm, more cold)"
	$(KUBE_NODE_BUILD) k8s.io/kubernetes/cmd/kubelet

$(KUBE_SCHEDULER):
	@echo ">> building kube-scheduler $(KUBE_VERSION)"
	$(KUBE_NODE_BUILD) k8s.io/kubernetes/cmd/kube-scheduler

$(KUBE_PROXY):
	@echo ">> building kube-proxy $(KUBE_VERSION)"
	$(KUBE_NODE_BUILD) k8s.io/kubernetes/cmd/kube-proxy

$(KUBECTL):
	@echo ">> building kubectl $(KUBE_VERSION)"
	$(KUBE_NODE_BUILD) k8s.io/kubernetes/cmd/kubectl

##@ Node

.PHONY: node-binaries
node-binaries: $(KUBE_APISERVER) $(ETCD) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KUBELET) $(KUBE_PROXY) $(KUBECTL) ## Build the node's Kubernetes components (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl) into bin/.
	@ln -sf $(KUBECTL) $(BIN)/kubectl

# The machine's packages the node runs on.
NODE_PACKAGES := containerd runc containernetworking-plugins

.PHONY: node-packages
node-packages: ## Install the node's Debian packages (containerd, runc, containernetworking-plugins) with apt-get when missing: Debian and root only.
	@missing=$$(for p in $(NODE_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || echo $$p; done); \
	  if [ -z "$$missing" ]; then exit 0; fi; \
	  if [ ! -f /etc/debian_version ] || ! command -v apt-get >/dev/null; then \
	    echo "the e2e node needs the packages $$missing (containerd 1.6+, runc, the CNI plugins in /usr/lib/cni):"; \
	    echo "this machine is not Debian: install them with its package manager (CNI_BIN_DIR= names where the plugins are)"; exit 1; fi >&2; \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "the e2e node needs the Debian packages $$missing and runs as root: run as root, or apt-get install -y $$missing first"; exit 1; fi >&2; \
	  echo ">> apt-get install $$missing"; \
	  apt-get install -y --no-install-recommends $$missing || { apt-get update && apt-get install -y --no-install-recommends $$missing; }

# Where the node keeps what it writes (hack/node/up.sh): its certificates,
# kubeconfigs and logs; its state (etcd, containerd, kubelet); its sockets.
NODE_DIR   ?= $(BIN)/node
NODE_STATE ?= /var/lib/fleetpolicy-node
NODE_RUN   ?= /run/fleetpolicy-node
NODE_ENV    = BIN=$(BIN) KUBE_VERSION=$(KUBE_VERSION) ETCD_VERSION=$(ETCD_VERSION) \
	NODE_DIR=$(NODE_DIR) NODE_STATE=$(NODE_STATE) NODE_RUN=$(NODE_RUN) \
	IMAGES_DIR=$(IMAGE_OUT) PAUSE_IMAGE=$(or $(IMAGE_REGISTRY),ghcr.io/fleetpolicy)/$(PAUSE_IMAGE):$(IMAGE_TAG)

.PHONY: node-up
node-up: node-binaries node-packages images ## Start the e2e node (root): control plane, containerd, kubelet, kube-proxy, the images of bin/images loaded; KUBECONFIG=bin/node/admin.kubeconfig.
	$(NODE_ENV) hack/node/up.sh

.PHONY: node-down
node-down: ## Stop the e2e node and undo what it changed (processes, containers, iptables rules, mounts, bridge np0, ip_forward); its logs stay in bin/node/logs.
	$(NODE_ENV) hack/node/down.sh

##@ End-to-end

E2E_TIMEOUT ?= 15m
# -run of the suite (all of it by default).
E2E_RUN     ?= .
# The suite: the controllers as pods (controllers/internal/e2e), every image
# as a container (functions/internal/imagee2e); one package at a time (-p 1),
# both on the one node.
E2E_PACKAGES := ./controllers/internal/e2e/ ./functions/internal/imagee2e/

.PHONY: e2e
e2e: node-binaries node-packages images ocm-core $(KUSTOMIZE) ## Start the e2e node, deploy manifests/crds, hub (without cert-manager) and spoke with the built images and prove them as pods, run OCM on it (the node managing itself) with the spoke as the fleetpolicy add-on, run every image as a container, then tear the node down whatever happened (root).
	@if [ -e $(NODE_RUN)/up ]; then echo ">> a node is up (a make node-up, or a run that was killed): tearing it down first"; \
	  $(NODE_ENV) hack/node/down.sh; fi
	@trap 'd=$$(date +%s); $(NODE_ENV) hack/node/down.sh; echo ">> node down in $$(( $$(date +%s) - d )) s"' EXIT; \
	  start=$$(date +%s); $(NODE_ENV) hack/node/up.sh; echo ">> node up in $$(( $$(date +%s) - start )) s"; \
	  FLEETPOLICY_E2E_NODE=$(NODE_DIR) FLEETPOLICY_E2E_IMAGES=$(or $(IMAGE_REGISTRY),ghcr.io/fleetpolicy) \
	  FLEETPOLICY_E2E_IMAGE_TAG=$(IMAGE_TAG) FLEETPOLICY_E2E_KUBECTL=$(KUBECTL) FLEETPOLICY_E2E_KUSTOMIZE=$(KUSTOMIZE) \
	  go test $(GO_TEST_FLAGS) -p 1 -timeout $(E2E_TIMEOUT) -v -run '$(E2E_RUN)' $(E2E_PACKAGES)
