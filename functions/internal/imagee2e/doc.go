// Package imagee2e runs the images `make images` builds as containers on the
// e2e node (`make e2e`, hack/node): each KRM function image as a Pod that reads
// a golden case's ResourceList on its stdin (kubectl run --stdin, attached
// through the kubelet) and must write that case's expected.yaml byte for byte
// and exit as the case expects; and the Argo CD plugin sidecar image running
// the plugin's own commands (fleetpolicy-cmp-generate discover, init and
// generate, as examples/argocd/plugin.yaml names them) in a copy of
// examples/argocd/app mounted into the Pod, as argocd-cmp-server would. Those
// read no input, so they run detached and their output is the Pod's log, read
// once it has ended (attached, a command could end before kubectl attaches
// and its output would be lost).
//
// Its tests run only when FLEETPOLICY_E2E_NODE names the directory of a running
// node (bin/node, where admin.kubeconfig is); otherwise they skip, so that
// `make test` compiles them and runs nothing. FLEETPOLICY_E2E_IMAGES and
// FLEETPOLICY_E2E_IMAGE_TAG name the images as the archives do
// (ghcr.io/fleetpolicy, dev), FLEETPOLICY_E2E_KUBECTL the kubectl binary
// (bin/kubectl-<version>). Nothing is pulled: every Pod has
// imagePullPolicy Never.
//
// Why Pods and not `ctr run`: on this machine's containerd (1.6.20) `ctr run`
// with stdio attached never starts the task (it waits forever; --null-io
// runs it), and a KRM function needs its stdin.
package imagee2e
