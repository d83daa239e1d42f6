// Package e2e proves the controllers as pods on a real node (`make e2e`,
// hack/node): kube-apiserver, kube-controller-manager, kube-scheduler, kubelet
// and kube-proxy on containerd, with the images `make images` built and
// nothing pulled. Its TestMain deploys, with bin/kustomize,
//
//   - manifests/crds, OCM's add-on and work CRDs
//     (controllers/internal/localplane/testdata/ocm-core) and manifests/addon
//     through an overlay that gives its AddOnTemplate's Deployment the spoke
//     image of the archives and imagePullPolicy Never, all before the hub pods
//     start (fleetpolicy-hub binds the add-on's hub role only when it serves
//     OCM's add-on API at its start);
//   - manifests/hub through an overlay that uses the component
//     manifests/hub/without-cert-manager: the webhook's serving certificate
//     (for fleetpolicy-hub-webhook.fleetpolicy-system.svc, signed by a CA, both
//     made by hack/webhook-cert.sh) comes from a secretGenerator and its CA
//     goes into the webhook's caBundle, the path README "Webhook certificate
//     without cert-manager" documents;
//   - manifests/spoke/hub in the namespace of cluster cluster1, whose
//     ManagedCluster it registers, and manifests/spoke, whose hub kubeconfig
//     (Secret fleetpolicy-spoke-hub-kubeconfig) holds a bound token of that
//     ServiceAccount and the node API server's address: the hub and the
//     managed cluster are the same API server, as for OCM's self-managed
//     local-cluster;
//
// every Deployment with the images of the archives (FLEETPOLICY_E2E_IMAGES,
// FLEETPOLICY_E2E_IMAGE_TAG) and imagePullPolicy Never, and waits until they
// are available. Its tests then check, in order: the hub's two replicas Ready
// with one holding the leader lease and their probes answering; the spoke's
// probes; the hub's and the spoke's processes, read from this machine's
// /proc, running as 65532 on a read-only root filesystem with GOMEMLIMIT as
// the manifests set it (the spoke's from its memory limit); a Policy enforced
// by the spoke pod on the node's API server and Compliant on the hub; the
// placement webhook admitting (and denying) through its Service; /explain
// refusing an anonymous or unauthorized caller and answering one bound to
// fleetpolicy-explain, through the Service; the hub's PodDisruptionBudget
// allowing one eviction and refusing the second; and a Progressive rollout
// that carries on, each cluster enforced once and wave by wave, when the
// leader pod is deleted in the middle of it and the other replica takes the
// lease. Clusters other than cluster1 in the rollout have no spoke: the test
// reports their replicas' compliance itself, as rollouttest's fake spoke
// does (test-only).
//
// Last, TestOCMAddOn runs OCM on the node, the hub managing itself (OCM's
// local-cluster): OCM's registration controller, addon manager and placement
// controller and the klusterlet's registration and work agents as processes
// on this machine (localplane.Attach, StartOCMHub, Join; the node's own
// kube-controller-manager signs the CSRs with the node's CA). The node joins
// as local-cluster; the hand-wired spoke Deployment is deleted (the add-on's
// has the same name and namespace); a ManagedClusterAddOn enables the
// fleetpolicy add-on on local-cluster, and OCM's work agent applies its
// Deployment. It checks the add-on's spoke pod running with the hub
// kubeconfig OCM registration issued (Secret fleetpolicy-hub-kubeconfig, a
// client certificate of the node's CA for the add-on's identity, mounted at
// /managed/hub-kubeconfig, as the pod's process reads it from /proc), the
// RoleBinding fleetpolicy-hub made for that identity, the
// ManagedClusterAddOn Available by OCM's workload prober from the
// Deployment's status, and a Policy bound to local-cluster enforced by that
// pod and Compliant on the hub.
//
// Without FLEETPOLICY_E2E_NODE (the node's directory, bin/node, holding
// admin.kubeconfig and pki/ca.crt) every test skips, so that `make test`
// compiles the package and runs nothing. FLEETPOLICY_E2E_KUSTOMIZE and
// FLEETPOLICY_E2E_KUBECTL name the binaries (bin/kustomize, bin/kubectl by
// default).
package e2e
