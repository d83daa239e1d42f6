// Package placementtest holds the integration tests of the hub's policy-based
// placement against a real API server with the admission webhook installed
// (manifests/hub/webhook.yaml, pointed at the test's hub by envtest): the
// fail-open / fail-closed matrix, hot reload, a broken policy's status, the
// EU/PCI example of examples/placement in Rego and CEL, remediation when a
// cluster's labels change, and the explain endpoint.
package placementtest
