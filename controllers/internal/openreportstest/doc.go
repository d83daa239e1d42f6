// Package openreportstest holds the integration test of the hub's OpenReports
// Reports (--openreports, hub.ReportWriter) against a real API server: the hub
// runs as its ServiceAccount with manifests/hub's RBAC and the
// manifests/hub/openreports component's, on a hub that first does not serve
// the Report API (the hub runs and writes none) and then does (OpenReports'
// CRD from manifests/crds/openreports, copied from its module by `make
// generate`). Replica compliance is written by the test, as a spoke's status
// sync would.
package openreportstest
