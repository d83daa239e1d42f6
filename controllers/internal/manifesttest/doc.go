// Package manifesttest proves the deployment manifests under manifests/: each
// kustomize base renders with the real kustomize binary, and the RBAC it grants
// is enough for the controller to do its job and no more (checked by running the
// controller impersonating its ServiceAccount against a real API server).
package manifesttest
