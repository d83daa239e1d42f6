# The end-to-end test of the spoke's OperatorPolicy controller with the REAL
# OLM (controllers/internal/olme2e): olm-operator and catalog-operator from
# bin/ (`make olm-binaries`) against a local API server (bin/envtest), and
# `opm serve` for the file-based catalog of its fixture,
# controllers/internal/olme2e/testdata/olm-catalog. The test
# starts and stops every process itself. Included by the Makefile.

OLM_E2E_TIMEOUT ?= 10m

##@ OLM end-to-end

.PHONY: e2e-olm
e2e-olm: envtest-binaries olm-binaries ## Install an operator with the real OLM through an enforcing OperatorPolicy until Compliant, then gate its upgrade (about 30 s once built).
	FLEETPOLICY_E2E_OLM=1 go test $(GO_TEST_FLAGS) -timeout $(OLM_E2E_TIMEOUT) -v -run 'TestRealOLM|TestCatalogIsTheBundles' ./controllers/internal/olme2e/
