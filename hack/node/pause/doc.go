// Command pause is the sandbox ("pause") container of the e2e node's pods
// (hack/node): it holds a pod's namespaces and does nothing else. It sleeps
// until SIGTERM or SIGINT and then exits 0, and reaps any child that ends up
// as its own (it is PID 1 of a pod that shares its process namespace).
// hack/imagebuild builds it into the image fleetpolicy-pause (kind pause),
// which containerd's CRI plugin on the node names as its sandbox image, so the
// node pulls nothing.
//
// It is its own module with no dependencies, outside the workspace, so that
// it is built apart from the product's modules.
package main
