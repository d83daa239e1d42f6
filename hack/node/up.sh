#!/usr/bin/env bash
# Starts the e2e node (`make node-up`; `make e2e` runs it): one Kubernetes node
# on this machine, every component a real process, nothing pulled.
#
#   etcd, kube-apiserver       as the tests run them, plus token-file auth,
#                              Node,RBAC authorization, service CIDR 10.96.0.0/16
#   kube-controller-manager    service-account tokens, endpoints, GC, ReplicaSets
#   kube-scheduler             binds the pods
#   containerd + runc          the Debian packages, on a socket and state of
#                              their own (NODE_RUN, NODE_STATE), CRI plugin with
#                              the local pause image as sandbox image
#   CNI bridge                 the Debian package's plugins; bridge np0,
#                              10.244.0.1/24, pods 10.244.0.0/24
#   kubelet                    cgroupfs, cgroup v1 allowed (failCgroupV1: false)
#   kube-proxy                 iptables mode: Services (ClusterIPs) work from
#                              pods and from the API server
#
# Every image of IMAGES_DIR (bin/images) is imported into containerd. What it
# writes: NODE_DIR (bin/node: certificates, tokens, kubeconfigs, configs, logs;
# admin.kubeconfig is the cluster admin's), NODE_STATE (etcd, containerd's and
# kubelet's data) and NODE_RUN (sockets). hack/node/down.sh undoes all of it,
# and runs by itself when this script fails. Needs root, Linux, and the
# Debian packages containerd, runc, containernetworking-plugins (mk/node.mk
# installs them with apt-get).
set -euo pipefail

: "${BIN:?BIN must name the repository bin directory}"
: "${KUBE_VERSION:?}" "${ETCD_VERSION:?}"
NODE_DIR=${NODE_DIR:-$BIN/node}
NODE_STATE=${NODE_STATE:-/var/lib/fleetpolicy-node}
NODE_RUN=${NODE_RUN:-/run/fleetpolicy-node}
IMAGES_DIR=${IMAGES_DIR:-$BIN/images}
PAUSE_IMAGE=${PAUSE_IMAGE:?PAUSE_IMAGE (the sandbox image reference) must be set}
CNI_BIN_DIR=${CNI_BIN_DIR:-/usr/lib/cni}
NODE_NAME=fleetpolicy-e2e
BRIDGE=np0
NODE_IP=10.244.0.1
POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
SERVICE_IP=10.96.0.1
APISERVER_PORT=6443
ETCD_PORT=12379
ETCD_PEER_PORT=12380
SOCK=$NODE_RUN/containerd.sock
here=$(cd "$(dirname "$0")" && pwd)
export NODE_DIR NODE_STATE NODE_RUN BIN

log() { printf '>> node: %s\n' "$*" >&2; }
fail() { printf 'node: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "the e2e node needs root (it mounts, runs containers and sets up a bridge and iptables rules); run make e2e as root"
[ "$(uname -s)" = Linux ] || fail "the e2e node needs Linux"
for b in containerd runc ctr iptables ip openssl; do
	command -v "$b" >/dev/null || fail "$b not found: make node-packages installs containerd, runc and the CNI plugins on Debian"
done
for p in bridge host-local loopback portmap; do
	[ -x "$CNI_BIN_DIR/$p" ] || fail "CNI plugin $CNI_BIN_DIR/$p not found (Debian package containernetworking-plugins)"
done
if [ -e "$NODE_RUN/up" ]; then
	fail "a node is already up ($NODE_RUN/up): make node-down first"
fi

started=0
cleanup_on_error() {
	if [ "$started" = 0 ]; then
		log "start failed: tearing down what was started (logs in $NODE_DIR/logs)"
		"$here/down.sh" || true
	fi
}
trap cleanup_on_error EXIT

rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"/{pki,logs} "$NODE_STATE" "$NODE_RUN"
: >"$NODE_RUN/up"
cat /proc/sys/net/ipv4/ip_forward >"$NODE_RUN/ip_forward"
pki=$NODE_DIR/pki

# --- certificates and tokens -------------------------------------------------
log "certificates"
(
	cd "$pki"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 \
		-subj "/CN=fleetpolicy-e2e-ca" 2>/dev/null
	cert() { # name subject [extensions]
		openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
		printf '%s\n' "${3:-extendedKeyUsage=clientAuth}" >"$1.ext"
		openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
			-out "$1.crt" -extfile "$1.ext" 2>/dev/null
		rm "$1.csr" "$1.ext"
	}
	cert apiserver "/CN=kube-apiserver" "$(printf '%s\n' \
		"subjectAltName=IP:$SERVICE_IP,IP:$NODE_IP,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
		"extendedKeyUsage=serverAuth")"
	cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
	openssl genrsa -out sa.key 2048 2>/dev/null
	openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
)
declare -A identity=(
	[admin]="fleetpolicy-e2e-admin,fleetpolicy-e2e-admin,system:masters"
	[kubelet]="system:node:$NODE_NAME,system:node:$NODE_NAME,system:nodes"
	[controller-manager]="system:kube-controller-manager,system:kube-controller-manager,"
	[scheduler]="system:kube-scheduler,system:kube-scheduler,"
	[proxy]="system:kube-proxy,system:kube-proxy,"
)
: >"$pki/tokens.csv"
for who in "${!identity[@]}"; do
	IFS=, read -r user uid groups <<<"${identity[$who]}"
	token=$(openssl rand -hex 24)
	printf '%s,%s,%s,"%s"\n' "$token" "$user" "$uid" "$groups" >>"$pki/tokens.csv"
	cat >"$NODE_DIR/$who.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://$NODE_IP:$APISERVER_PORT", certificate-authority: "$pki/ca.crt"}
users:
- name: $who
  user: {token: "$token"}
contexts:
- name: e2e
  context: {cluster: e2e, user: $who}
current-context: e2e
EOF
done
chmod 600 "$pki"/*.key "$pki/tokens.csv" "$NODE_DIR"/*.kubeconfig

# --- network -----------------------------------------------------------------
log "bridge $BRIDGE $NODE_IP/24, ip_forward"
ip link add "$BRIDGE" type bridge
ip addr add "$NODE_IP/24" dev "$BRIDGE"
ip link set "$BRIDGE" up
echo 1 >/proc/sys/net/ipv4/ip_forward
mkdir -p "$NODE_STATE/cni"
cat >"$NODE_STATE/cni/10-fleetpolicy-e2e.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "fleetpolicy-e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$NODE_STATE/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
        "routes": [{"dst": "$SERVICE_CIDR"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF

start() { # name command...: runs in the background, output in logs/name.log
	local name=$1
	shift
	"$@" >"$NODE_DIR/logs/$name.log" 2>&1 &
	echo $! >"$NODE_RUN/$name.pid"
}
wait_for() { # what seconds command...
	local what=$1 secs=$2
	shift 2
	for _ in $(seq "$((secs * 5))"); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.2
	done
	fail "$what not ready after ${secs}s (logs in $NODE_DIR/logs)"
}
kubectl() { "$BIN/kubectl-$KUBE_VERSION" --kubeconfig "$NODE_DIR/admin.kubeconfig" "$@"; }

# --- control plane -----------------------------------------------------------
log "etcd, kube-apiserver"
start etcd "$BIN/etcd-$ETCD_VERSION" --data-dir "$NODE_STATE/etcd" --name e2e \
	--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
	--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
	--initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync
start kube-apiserver "$BIN/kube-apiserver-$KUBE_VERSION" \
	--etcd-servers "http://127.0.0.1:$ETCD_PORT" \
	--bind-address 0.0.0.0 --secure-port "$APISERVER_PORT" --advertise-address "$NODE_IP" \
	--tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
	--client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
	--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
	--service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged=true \
	--service-account-issuer https://kubernetes.default.svc.cluster.local \
	--service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
	--kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
	--kubelet-client-key "$pki/apiserver-kubelet-client.key" \
	--kubelet-preferred-address-types InternalIP,Hostname \
	--profiling=false
wait_for kube-apiserver 60 kubectl get --raw /readyz

log "kube-controller-manager, kube-scheduler"
start kube-controller-manager "$BIN/kube-controller-manager-$KUBE_VERSION" \
	--kubeconfig "$NODE_DIR/controller-manager.kubeconfig" \
	--authentication-kubeconfig "$NODE_DIR/controller-manager.kubeconfig" \
	--authorization-kubeconfig "$NODE_DIR/controller-manager.kubeconfig" \
	--authentication-skip-lookup=true --bind-address 127.0.0.1 --secure-port 0 \
	--leader-elect=false --use-service-account-credentials=true \
	--service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
	--cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
	--service-cluster-ip-range "$SERVICE_CIDR"
start kube-scheduler "$BIN/kube-scheduler-$KUBE_VERSION" \
	--kubeconfig "$NODE_DIR/scheduler.kubeconfig" \
	--authentication-kubeconfig "$NODE_DIR/scheduler.kubeconfig" \
	--authorization-kubeconfig "$NODE_DIR/scheduler.kubeconfig" \
	--authentication-skip-lookup=true --bind-address 127.0.0.1 --secure-port 0 \
	--leader-elect=false

# --- containerd --------------------------------------------------------------
log "containerd ($SOCK)"
cat >"$NODE_DIR/containerd.toml" <<EOF
version = 2
root = "$NODE_STATE/containerd"
state = "$NODE_RUN/containerd"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$NODE_STATE/containerd-opt"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    # This machine's containers lack CAP_SYS_RESOURCE: never lower an OOM score.
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$NODE_RUN/runc"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$CNI_BIN_DIR"
      conf_dir = "$NODE_STATE/cni"
EOF
start containerd containerd --config "$NODE_DIR/containerd.toml"
wait_for containerd 30 ctr --address "$SOCK" version

log "importing $(ls "$IMAGES_DIR"/*.tar | wc -l) images from $IMAGES_DIR"
for tar in "$IMAGES_DIR"/*.tar; do
	ctr --address "$SOCK" -n k8s.io images import "$tar" >>"$NODE_DIR/logs/images.log" 2>&1 ||
		fail "ctr images import $tar failed: $(tail -3 "$NODE_DIR/logs/images.log")"
done
imported=$(ctr --address "$SOCK" -n k8s.io images ls -q)
grep -qx "$PAUSE_IMAGE" <<<"$imported" ||
	fail "the pause image $PAUSE_IMAGE is not among the imported images (make images builds it)"

# --- kubelet, kube-proxy -----------------------------------------------------
log "kubelet, kube-proxy"
cat >"$NODE_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The machine's kernel mounts cgroup v1, which kubelet 1.35 refuses by default.
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$SOCK
resolvConf: ""
failSwapOn: false
podLogsDir: $NODE_STATE/pod-logs
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
clusterDomain: cluster.local
healthzPort: 0
readOnlyPort: 0
port: 10250
serializeImagePulls: false
# Nothing is pulled: keep every imported image, evict nothing for disk.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: "1%", imagefs.available: "1%"}
EOF
start kubelet "$BIN/kubelet-$KUBE_VERSION" --config "$NODE_DIR/kubelet.yaml" \
	--kubeconfig "$NODE_DIR/kubelet.kubeconfig" --root-dir "$NODE_STATE/kubelet" \
	--hostname-override "$NODE_NAME" --node-ip "$NODE_IP"
cat >"$NODE_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $NODE_DIR/proxy.kubeconfig}
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
# Every Service connection is masqueraded: the API server (a host process)
# reaches a webhook's pod with a source the pod can answer.
iptables: {masqueradeAll: true}
conntrack: {maxPerCore: 0}
healthzBindAddress: ""
metricsBindAddress: 127.0.0.1:10249
EOF
start kube-proxy "$BIN/kube-proxy-$KUBE_VERSION" --config "$NODE_DIR/kube-proxy.yaml"

wait_for "node $NODE_NAME Ready" 90 kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s
wait_for "ServiceAccount default" 30 kubectl -n default get serviceaccount default
for pidfile in "$NODE_RUN"/*.pid; do
	name=$(basename "$pidfile" .pid)
	kill -0 "$(cat "$pidfile")" 2>/dev/null ||
		fail "$name exited: $(tail -n 3 "$NODE_DIR/logs/$name.log")"
done
started=1
log "up: KUBECONFIG=$NODE_DIR/admin.kubeconfig"
