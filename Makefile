# fleetpolicy — every developer and CI entry point. `make help` lists the targets.
#
# Every tool the project needs is built from the Go module proxy into bin/
# (git-ignored). A tool's binary name carries its version, so a tool is rebuilt only
# when its version below changes. The versions must match the go.mod of the tool's
# module under hack/tools/ (checked by `make verify`).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Tool versions (pinned).
KUBE_VERSION           := v1.35.4
ETCD_VERSION           := v3.6.6
KUSTOMIZE_VERSION      := v5.8.1
CONTROLLER_GEN_VERSION := v0.20.0
OLM_VERSION            := v0.38.0
OPM_VERSION            := v1.61.0
OCM_VERSION            := v1.2.0
# OCM's governance policy components (framework add-on, config-policy-controller,
# propagator); also the version whose CRDs `make generate` copies.
OCM_POLICY_VERSION     := v0.19.0
# The PlacementRule API the propagator at OCM_POLICY_VERSION pins (its CRD is
# compared with ours in controllers/internal/crdtest).
OCM_SUBSCRIPTION_VERSION := v0.16.0
# The image library hack/imagebuild (`make images`) is built on.
GO_CONTAINERREGISTRY_VERSION := v0.22.1

BIN            := $(CURDIR)/bin
ENVTEST_ASSETS := $(BIN)/envtest
KUBE_APISERVER := $(BIN)/kube-apiserver-$(KUBE_VERSION)
KUBE_CONTROLLER_MANAGER := $(BIN)/kube-controller-manager-$(KUBE_VERSION)
ETCD           := $(BIN)/etcd-$(ETCD_VERSION)
KUSTOMIZE      := $(BIN)/kustomize-$(KUSTOMIZE_VERSION)
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
OLM_OPERATOR     := $(BIN)/olm-operator-$(OLM_VERSION)
CATALOG_OPERATOR := $(BIN)/catalog-operator-$(OLM_VERSION)
OPM              := $(BIN)/opm-$(OPM_VERSION)
OCM_PLACEMENT    := $(BIN)/ocm-placement-$(OCM_VERSION)
OCM_REGISTRATION := $(BIN)/ocm-registration-$(OCM_VERSION)
OCM_WORK         := $(BIN)/ocm-work-$(OCM_VERSION)
OCM_ADDON        := $(BIN)/ocm-addon-$(OCM_VERSION)
OCM_FRAMEWORK_ADDON := $(BIN)/ocm-framework-addon-$(OCM_POLICY_VERSION)
OCM_CONFIG_POLICY   := $(BIN)/ocm-config-policy-controller-$(OCM_POLICY_VERSION)
OCM_PROPAGATOR      := $(BIN)/ocm-propagator-$(OCM_POLICY_VERSION)
KPT            ?= $(shell command -v kpt 2>/dev/null)

MODULES := shared functions controllers
# OCM's policy components whose CRDs our schemas are compared with
# (controllers/internal/crdtest) and the interop test installs where OCM's
# components run (PolicyAutomation too: OCM's propagator needs it on the hub);
# `make generate` copies them into testdata.
OCM_POLICY_CRDS_DIR := controllers/internal/crdtest/testdata/ocm-$(OCM_POLICY_VERSION)
# The CRDs of library-owned kinds that `make generate` copies from their Go modules.
OCM_CRDS := cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml \
	cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml \
	cluster/v1alpha1/0000_05_clusters.open-cluster-management.io_addonplacementscores.crd.yaml \
	cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml \
	cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml \
	cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml \
	cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml
# OCM's add-on and work CRDs at OCM_VERSION: the hub of the add-on test and
# `make demo` installs the first five, each managed cluster the last
# (the cluster CRDs come from manifests/crds/ocm); `make generate` copies them.
OCM_CORE_CRDS_DIR := controllers/internal/localplane/testdata/ocm-core
OCM_CORE_CRDS := addon/v1alpha1/0000_00_addon.open-cluster-management.io_clustermanagementaddons.crd.yaml \
	addon/v1alpha1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml \
	addon/v1alpha1/0000_02_addon.open-cluster-management.io_addondeploymentconfigs.crd.yaml \
	addon/v1alpha1/0000_03_addon.open-cluster-management.io_addontemplates.crd.yaml \
	work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml \
	work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml
# The CRDs the spoke needs on a managed cluster, which the add-on brings there.
ADDON_CRDS := $(addprefix manifests/crds/fleetpolicy/policy.open-cluster-management.io_,policies.yaml configurationpolicies.yaml operatorpolicies.yaml)
# Binaries `make build` produces: the controllers and one per KRM function.
CONTROLLER_BINARIES := $(notdir $(wildcard controllers/cmd/*))
FUNCTION_BINARIES   := $(notdir $(patsubst %/main.go,%,$(wildcard functions/*/main.go)))

export KUBEBUILDER_ASSETS := $(ENVTEST_ASSETS)
export PATH := $(BIN):$(PATH)

GO_TEST_FLAGS ?= -count=1
TEST_TIMEOUT  ?= 25m

##@ General

.PHONY: help
help: ## List every target with what it does.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
	  /^[a-zA-Z0-9_.-]+:.*##/ { printf "  %-18s %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Tools

.PHONY: tools
tools: envtest-binaries kustomize controller-gen ## Build the tools most targets share into bin/ (kube-apiserver and etcd for envtest, kustomize, controller-gen); the others are built by the targets that need them (olm-binaries, ocm-core, ocm-placement, ocm-policy-binaries, node-binaries) and kpt comes from PATH (kpt-check).

.PHONY: envtest-binaries
envtest-binaries: $(ENVTEST_ASSETS)/kube-apiserver $(ENVTEST_ASSETS)/etcd ## Build kube-apiserver and etcd for envtest into bin/envtest.

$(KUBE_APISERVER):
	@echo ">> building kube-apiserver $(KUBE_VERSION) (several minutes on a cold cache)"
	GOWORK=off go build -C hack/tools/kubernetes -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(KUBE_CONTROLLER_MANAGER):
	@echo ">> building kube-controller-manager $(KUBE_VERSION) (several minutes on a cold cache)"
	CGO_ENABLED=0 GOWORK=off go build -C hack/tools/kubernetes -o $@ k8s.io/kubernetes/cmd/kube-controller-manager

$(ETCD):
	@echo ">> building etcd $(ETCD_VERSION)"
	GOWORK=off go build -C hack/tools/etcd -o $@ go.etcd.io/etcd/server/v3

$(KUSTOMIZE):
	@echo ">> building kustomize $(KUSTOMIZE_VERSION)"
	GOWORK=off go build -C hack/tools/kustomize -o $@ sigs.k8s.io/kustomize/kustomize/v5

$(CONTROLLER_GEN):
	@echo ">> building controller-gen $(CONTROLLER_GEN_VERSION)"
	GOWORK=off go build -C hack/tools/controller-gen -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(ENVTEST_ASSETS)/kube-apiserver: $(KUBE_APISERVER)
	@mkdir -p $(ENVTEST_ASSETS) && ln -sf $< $@

$(ENVTEST_ASSETS)/etcd: $(ETCD)
	@mkdir -p $(ENVTEST_ASSETS) && ln -sf $< $@

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Build kustomize into bin/kustomize.
	@ln -sf $< $(BIN)/kustomize

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Build controller-gen into bin/controller-gen.
	@ln -sf $< $(BIN)/controller-gen

$(OLM_OPERATOR):
	@echo ">> building olm-operator $(OLM_VERSION)"
	CGO_ENABLED=0 GOWORK=off go build -C hack/tools/olm -o $@ github.com/operator-framework/operator-lifecycle-manager/cmd/olm

$(CATALOG_OPERATOR):
	@echo ">> building catalog-operator $(OLM_VERSION)"
	CGO_ENABLED=0 GOWORK=off go build -C hack/tools/olm -o $@ github.com/operator-framework/operator-lifecycle-manager/cmd/catalog

$(OPM):
	@echo ">> building opm $(OPM_VERSION)"
	CGO_ENABLED=0 GOWORK=off go build -C hack/tools/opm -tags containers_image_openpgp -o $@ github.com/operator-framework/operator-registry/cmd/opm

$(OCM_PLACEMENT):
	@echo ">> building OCM's placement controller $(OCM_VERSION)"
	CGO_ENABLED=0 GOWORK=off go build -C hack/tools/ocm -o $@ open-cluster-management.io/ocm/cmd/placement

# OCM's registration depends on sigs.k8s.io/about-api, a version the checksum
# database does not hold; the proxy serves exactly the hash in OCM's own go.sum
# (and hack/tools/ocm/go.sum), so that one module, and nothing else, is exempt
# from the checksum database. go.sum still verifies it.
OCM_GOENV := CGO_ENABLED=0 GOWORK=off GONOSUMDB=sigs.k8s.io/about-api

$(OCM_REGISTRATION):
	@echo ">> building OCM's registration (hub controller and agent) $(OCM_VERSION) (several minutes on a cold cache)"
	$(OCM_GOENV) go build -C hack/tools/ocm -o $@ open-cluster-management.io/ocm/cmd/registration

$(OCM_WORK):
	@echo ">> building OCM's work (agent) $(OCM_VERSION)"
	$(OCM_GOENV) go build -C hack/tools/ocm -o $@ open-cluster-management.io/ocm/cmd/work

$(OCM_ADDON):
	@echo ">> building OCM's addon (manager and webhook) $(OCM_VERSION)"
	$(OCM_GOENV) go build -C hack/tools/ocm -o $@ open-cluster-management.io/ocm/cmd/addon

.PHONY: ocm-core
ocm-core: ocm-placement $(OCM_REGISTRATION) $(OCM_WORK) $(OCM_ADDON) $(KUBE_CONTROLLER_MANAGER) ## Build OCM's core (registration, work, addon, placement) and kube-controller-manager (the hub's CSR signer and garbage collector) into bin/: the real OCM a cluster joins and the fleetpolicy add-on installs through.
	@ln -sf $(OCM_REGISTRATION) $(BIN)/ocm-registration && ln -sf $(OCM_WORK) $(BIN)/ocm-work && ln -sf $(OCM_ADDON) $(BIN)/ocm-addon && ln -sf $(KUBE_CONTROLLER_MANAGER) $(BIN)/kube-controller-manager

.PHONY: ocm-placement
ocm-placement: $(OCM_PLACEMENT) ## Build OCM's placement controller into bin/ocm-placement (the real scheduler the scheduling test compares shared/scheduling with).
	@ln -sf $(OCM_PLACEMENT) $(BIN)/ocm-placement

$(OCM_FRAMEWORK_ADDON):
	@echo ">> building OCM's governance-policy-framework-addon $(OCM_POLICY_VERSION)"
	CGO_ENABLED=0 GOWORK=off go build -C hack/tools/ocm-framework-addon -o $@ open-cluster-management.io/governance-policy-framework-addon

$(OCM_CONFIG_POLICY):
	@echo ">> building OCM's config-policy-controller $(OCM_POLICY_VERSION)"
	CGO_ENABLED=0 GOWORK=off go build -C hack/tools/ocm-config-policy-controller -o $@ open-cluster-management.io/config-policy-controller

$(OCM_PROPAGATOR):
	@echo ">> building OCM's governance-policy-propagator $(OCM_POLICY_VERSION)"
	CGO_ENABLED=0 GOWORK=off go build -C hack/tools/ocm-propagator -o $@ open-cluster-management.io/governance-policy-propagator

.PHONY: ocm-policy-binaries
ocm-policy-binaries: $(OCM_FRAMEWORK_ADDON) $(OCM_CONFIG_POLICY) $(OCM_PROPAGATOR) ## Build OCM's framework add-on, config-policy-controller and propagator into bin/ (the real OCM peers of the interop test).
	@ln -sf $(OCM_FRAMEWORK_ADDON) $(BIN)/ocm-framework-addon && ln -sf $(OCM_CONFIG_POLICY) $(BIN)/ocm-config-policy-controller && ln -sf $(OCM_PROPAGATOR) $(BIN)/ocm-propagator

.PHONY: olm-binaries
olm-binaries: $(OLM_OPERATOR) $(CATALOG_OPERATOR) $(OPM) ## Build olm-operator, catalog-operator and opm into bin/ (real OLM for the OLM end-to-end test).
	@ln -sf $(OLM_OPERATOR) $(BIN)/olm-operator && ln -sf $(CATALOG_OPERATOR) $(BIN)/catalog-operator && ln -sf $(OPM) $(BIN)/opm

.PHONY: kpt-check
kpt-check: ## Check that kpt is on PATH (it cannot be built from the Go proxy; see README).
	@if [ -z "$(KPT)" ]; then echo "kpt not found on PATH: see README 'Prerequisites'"; exit 1; fi
	@echo "kpt: $(KPT) ($$($(KPT) version))"

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) $(KUSTOMIZE) ## Regenerate deepcopy code, CRDs (ours from shared/api, OCM's, OLM's and OpenReports' Report copied from their modules) and the add-on's AddOnTemplate.
	$(CONTROLLER_GEN) object paths=./shared/api/...
	rm -rf manifests/crds/fleetpolicy manifests/crds/ocm manifests/crds/olm manifests/crds/openreports
	$(CONTROLLER_GEN) crd paths=./shared/api/... output:crd:dir=manifests/crds/fleetpolicy
	@mkdir -p manifests/crds/ocm manifests/crds/olm
	@cd shared && go mod download open-cluster-management.io/api github.com/operator-framework/api
	@ocm=$$(go list -C shared -m -f '{{.Dir}}' open-cluster-management.io/api); \
	  for f in $(OCM_CRDS); do install -m 0644 $$ocm/$$f manifests/crds/ocm/; done
	@olm=$$(go list -C shared -m -f '{{.Dir}}' github.com/operator-framework/api); \
	  install -m 0644 $$olm/crds/operators.coreos.com_*.yaml manifests/crds/olm/
	@mkdir -p manifests/crds/openreports
	@cd shared && go mod download github.com/openreports/reports-api
	@reports=$$(go list -C shared -m -f '{{.Dir}}' github.com/openreports/reports-api); \
	  install -m 0644 $$reports/config/crd/openreports.io_reports.yaml manifests/crds/openreports/
	@rm -rf $(OCM_POLICY_CRDS_DIR) && mkdir -p $(OCM_POLICY_CRDS_DIR)
	@cfg=$$(go mod download -json open-cluster-management.io/config-policy-controller@$(OCM_POLICY_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
	  install -m 0644 $$cfg/deploy/crds/policy.open-cluster-management.io_*.yaml $(OCM_POLICY_CRDS_DIR)/
	@prop=$$(go mod download -json open-cluster-management.io/governance-policy-propagator@$(OCM_POLICY_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
	  for k in policies policysets placementbindings policyautomations; do install -m 0644 $$prop/deploy/crds/policy.open-cluster-management.io_$$k.yaml $(OCM_POLICY_CRDS_DIR)/; done
	@sub=$$(go mod download -json open-cluster-management.io/multicloud-operators-subscription@$(OCM_SUBSCRIPTION_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
	  install -m 0644 $$sub/deploy/hub-common/apps.open-cluster-management.io_placementrules_crd.yaml $(OCM_POLICY_CRDS_DIR)/apps.open-cluster-management.io_placementrules.yaml
	@rm -rf $(OCM_CORE_CRDS_DIR) && mkdir -p $(OCM_CORE_CRDS_DIR)
	@api=$$(GOWORK=off go list -C hack/tools/ocm -m -f '{{.Dir}}' open-cluster-management.io/api); \
	  for f in $(OCM_CORE_CRDS); do install -m 0644 $$api/$$f $(OCM_CORE_CRDS_DIR)/; done
	$(KUSTOMIZE) build manifests/addon/agent | GOWORK=off go run -C hack/addontemplate . \
	  -template $(CURDIR)/manifests/addon/agent/template.yaml -orphan CustomResourceDefinition \
	  $(addprefix $(CURDIR)/,$(ADDON_CRDS)) - > manifests/addon/addontemplate.yaml

.PHONY: fmt
fmt: ## gofmt every Go file.
	gofmt -w $$(git ls-files '*.go')

.PHONY: fmt-check
fmt-check: ## Fail on Go files gofmt would change (rewrites nothing; make fmt does).
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

.PHONY: tidy-check
tidy-check: ## Fail when a Go module's go.mod or go.sum is not tidy: `go mod tidy -diff` in every module (shared, functions, controllers, bench/report, hack/'s programs and hack/tools/'s pins); rewrites nothing.
	@untidy=(); \
	  for mod in $$(git ls-files '*go.mod'); do \
	    dir=$$(dirname "$$mod"); GOWORK=off go mod tidy -C "$$dir" -diff || untidy+=("$$dir"); \
	  done; \
	  if [ $${#untidy[@]} -gt 0 ]; then echo "go.mod or go.sum not tidy (run go mod tidy there and commit): $${untidy[*]}"; exit 1; fi

.PHONY: vet
vet: ## go vet every Go module: shared, functions, controllers, bench/report and hack/'s programs (imagebuild, addontemplate, node/pause); no other linter runs.
	go vet $(addsuffix /...,$(addprefix ./,$(MODULES)))
	GOWORK=off go vet -C bench/report ./...
	GOWORK=off go vet -C hack/imagebuild ./...
	GOWORK=off go vet -C hack/addontemplate ./...
	GOWORK=off go vet -C hack/node/pause ./...

.PHONY: verify
verify: generate ## Fail when generated code or CRDs are stale, tool versions disagree with hack/tools, or a target of the Makefile or mk/ is missing from make help.
	@git diff --exit-code -- shared/api manifests/crds manifests/addon/addontemplate.yaml $(OCM_POLICY_CRDS_DIR) $(OCM_CORE_CRDS_DIR) || \
	  { echo "generated files are stale: run 'make generate' and commit"; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- shared/api manifests/crds manifests/addon/addontemplate.yaml $(OCM_POLICY_CRDS_DIR) $(OCM_CORE_CRDS_DIR)); \
	  if [ -n "$$untracked" ]; then echo "generated files not committed: $$untracked"; exit 1; fi
	@grep -q "k8s.io/kubernetes $(KUBE_VERSION)" hack/tools/kubernetes/go.mod
	@grep -q "go.etcd.io/etcd/server/v3 $(ETCD_VERSION)" hack/tools/etcd/go.mod
	@grep -q "sigs.k8s.io/kustomize/kustomize/v5 $(KUSTOMIZE_VERSION)" hack/tools/kustomize/go.mod
	@grep -q "sigs.k8s.io/controller-tools $(CONTROLLER_GEN_VERSION)" hack/tools/controller-gen/go.mod
	@grep -q "github.com/operator-framework/operator-lifecycle-manager $(OLM_VERSION)" hack/tools/olm/go.mod
	@grep -q "github.com/operator-framework/operator-registry $(OPM_VERSION)" hack/tools/opm/go.mod
	@grep -q "open-cluster-management.io/ocm $(OCM_VERSION)" hack/tools/ocm/go.mod
	@grep -q "open-cluster-management.io/governance-policy-framework-addon $(OCM_POLICY_VERSION)" hack/tools/ocm-framework-addon/go.mod
	@grep -q "open-cluster-management.io/config-policy-controller $(OCM_POLICY_VERSION)" hack/tools/ocm-config-policy-controller/go.mod
	@grep -q "open-cluster-management.io/governance-policy-propagator $(OCM_POLICY_VERSION)" hack/tools/ocm-propagator/go.mod
	@grep -q "open-cluster-management.io/multicloud-operators-subscription $(OCM_SUBSCRIPTION_VERSION)" hack/tools/ocm-propagator/go.mod
	@grep -q "github.com/google/go-containerregistry $(GO_CONTAINERREGISTRY_VERSION)" hack/imagebuild/go.mod
	@undocumented=$$(awk '/^\.PHONY:/ {for (i = 2; i <= NF; i++) phony[$$i] = 1} \
	  /^[a-zA-Z0-9_.-]+:/ {name = $$1; sub(/:.*/, "", name); if (phony[name] && $$0 !~ /##/) print name}' $(MAKEFILE_LIST)); \
	  if [ -n "$$undocumented" ]; then echo "targets missing from 'make help' (no ## comment): $$undocumented"; exit 1; fi
	@echo "verify: generated files, tool versions and 'make help' are up to date"

##@ Build

.PHONY: build
build: ## Build the controllers, every KRM function and the Argo CD plugin's command (init, discover, generate) into bin/.
	@mkdir -p $(BIN)
	@for b in $(CONTROLLER_BINARIES); do echo ">> bin/$$b"; go build -C controllers -o $(BIN)/$$b ./cmd/$$b; done
	@for b in $(FUNCTION_BINARIES); do echo ">> bin/$$b"; go build -C functions -o $(BIN)/$$b ./$$b; done
	@echo ">> bin/fleetpolicy-cmp-generate"; go build -C functions -o $(BIN)/fleetpolicy-cmp-generate ./cmd/fleetpolicy-cmp-generate

##@ Test

.PHONY: test
test: verify fmt-check tidy-check vet tools olm-binaries ocm-core ocm-policy-binaries chromium build ## What CI runs first (.ci/run, then make e2e): verify, fmt-check, tidy-check, vet, unit, golden, integration, real-OLM, real-OCM-scheduler, OCM add-on (real registration, work and addon manager), OCM policy interop and the console's browser (headless Chromium) tests, then each fuzz target briefly.
	FLEETPOLICY_E2E_OLM=1 go test $(GO_TEST_FLAGS) -timeout $(TEST_TIMEOUT) $(addsuffix /...,$(addprefix ./,$(MODULES)))
	GOWORK=off go test -C bench/report $(GO_TEST_FLAGS) ./...
	GOWORK=off go test -C hack/imagebuild $(GO_TEST_FLAGS) ./...
	GOWORK=off go test -C hack/addontemplate $(GO_TEST_FLAGS) ./...
	hack/fuzz/classify_test.sh
	$(MAKE) --no-print-directory fuzz FUZZTIME=2s

FUZZTIME ?= 3s

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (default 3s); their committed seed corpora also run as unit tests.
	FUZZTIME=$(FUZZTIME) hack/fuzz/run.sh

.PHONY: test-shared
test-shared: ## Only the shared/ tests (API types and pure algorithms; no tools needed).
	go test $(GO_TEST_FLAGS) ./shared/...

.PHONY: check
check: fmt-check tidy-check vet ## Quick pre-commit check of every module, rewriting nothing: fmt-check, tidy-check, vet and `go test -short` (tests that start API servers or processes, build binaries or run kustomize or kpt skip themselves under -short).
	go test -short $(addsuffix /...,$(addprefix ./,$(MODULES)))
	GOWORK=off go test -C bench/report -short ./...
	GOWORK=off go test -C hack/imagebuild -short ./...
	GOWORK=off go test -C hack/addontemplate -short ./...

##@ Benchmarks

# `make bench` runs every benchmark BENCH_RUNS times (bench/README.md is the
# index of them: where each lives, what it measures, how to run it alone) and
# appends their result lines (one per run) to BENCH_RESULTS,
# then bin/benchreport (bench/report) prints one table: per figure the median over the runs,
# the floor and the ratio to it, and the target where one is stated. The
# expensive benchmarks run with -benchtime 1x and -count, so that every run is
# a line of its own (-benchtime Nx would average N runs into one line).
BENCH_RUNS         ?= 3
BENCH_RESULTS      ?= $(BIN)/bench/results.txt
BENCH_FLAGS        ?=
BENCH_REPORT_FLAGS ?=
BENCHREPORT        := $(BIN)/benchreport

$(BENCHREPORT): $(filter-out %_test.go,$(wildcard bench/report/*.go)) bench/report/go.mod bench/report/go.sum
	GOWORK=off go build -C bench/report -o $@ .

.PHONY: bench
bench: tools build ocm-policy-binaries $(BENCHREPORT) ## Run every benchmark BENCH_RUNS times (default 3; the spoke against OCM at 1,000 policies once) into bin/bench/results.txt and print one table of medians, floors, ratios and targets. BENCH_FLAGS are passed to fleetpolicy-bench.
	@mkdir -p $(dir $(BENCH_RESULTS)) && : > $(BENCH_RESULTS)
	@failed=(); \
	  record() { echo ">> $$*" >&2; "$$@" | tee -a $(BENCH_RESULTS) >&2 || failed+=("$$*"); }; \
	  record go test -run '^$$' -bench . -count $(BENCH_RUNS) ./shared/...; \
	  record go test -run '^$$' -bench BenchmarkPlanRollout -benchtime 1x -count $(BENCH_RUNS) ./functions/plan-rollout/; \
	  record go test -run '^$$' -bench 'BenchmarkFunctions|BenchmarkCheckPlacementDistinct|BenchmarkKitAgainstSDK' -benchtime 1x -count $(BENCH_RUNS) -timeout 60m ./functions/internal/benchtest/; \
	  record go test -run '^$$' -bench BenchmarkSpokeTemplateSync -benchtime 1x -count $(BENCH_RUNS) -timeout 60m ./controllers/internal/spokebench/; \
	  record go test -run '^$$' -bench BenchmarkConsoleFleetPage -benchtime 1x -count $(BENCH_RUNS) -timeout 30m ./controllers/internal/console/; \
	  record go test -run '^$$' -bench 'BenchmarkSpokeAgainstOCM/policies=200/' -benchtime 1x -count $(BENCH_RUNS) -timeout 90m ./controllers/internal/spokebench/; \
	  record go test -run '^$$' -bench 'BenchmarkSpokeAgainstOCM/policies=1000/' -benchtime 1x -count 1 -timeout 90m ./controllers/internal/spokebench/; \
	  record go run ./controllers/cmd/fleetpolicy-bench --runs $(BENCH_RUNS) $(BENCH_FLAGS); \
	  echo ">> $(BENCHREPORT) $(BENCH_REPORT_FLAGS) $(BENCH_RESULTS)" >&2; \
	  $(BENCHREPORT) $(BENCH_REPORT_FLAGS) $(BENCH_RESULTS) || failed+=("benchreport (bad result lines)"); \
	  if [ $${#failed[@]} -gt 0 ]; then printf 'failed (what it printed is in the table): %s\n' "$${failed[@]}" >&2; exit 1; fi

.PHONY: bench-report
bench-report: $(BENCHREPORT) ## Print the table of the last `make bench` again; BENCH_REPORT_FLAGS=-markdown prints it for docs/performance.md.
	@$(BENCHREPORT) $(BENCH_REPORT_FLAGS) $(BENCH_RESULTS)

##@ Run

.PHONY: demo
demo: tools build ocm-core ## The main job end to end on a real OCM fleet: a local OCM hub, 3 clusters that join through OCM registration and get the spoke as the fleetpolicy add-on, examples/demo rendered by the functions, live rollout, dependencies, placement, OperatorPolicy.
	go run ./controllers/cmd/fleetpolicy-demo $(DEMO_ARGS)

.PHONY: clean
clean: ## Remove bin/ (built tools and binaries).
	rm -rf $(BIN)

include mk/images.mk
include mk/olm.mk
include mk/node.mk
include mk/console.mk
