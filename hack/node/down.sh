#!/usr/bin/env bash
# Tears the e2e node down (`make node-down`; `make e2e` always runs it): what
# hack/node/up.sh started and changed, in this order, each step whether or not
# the one before worked: the node's processes (kubelet first, so that it
# restarts nothing), containerd's containers and tasks, kube-proxy's iptables
# rules (kube-proxy --cleanup), the mounts under the node's state, the bridge,
# the state and run directories, and ip_forward as it was. NODE_DIR (bin/node)
# is kept for its logs. Safe to run when nothing is up.
set -uo pipefail

: "${BIN:?BIN must name the repository bin directory}"
: "${KUBE_VERSION:?}"
NODE_DIR=${NODE_DIR:-$BIN/node}
NODE_STATE=${NODE_STATE:-/var/lib/fleetpolicy-node}
NODE_RUN=${NODE_RUN:-/run/fleetpolicy-node}
BRIDGE=np0
SOCK=$NODE_RUN/containerd.sock

log() { printf '>> node: %s (%ds)\n' "$*" "$SECONDS" >&2; }

[ "$(id -u)" = 0 ] || { echo "node: tearing the e2e node down needs root" >&2; exit 1; }

stop() { # name...: SIGTERM to all, then SIGKILL to those left after 10 s
	local name pids=()
	for name in "$@"; do
		[ -f "$NODE_RUN/$name.pid" ] || continue
		pids+=("$(cat "$NODE_RUN/$name.pid")")
		rm -f "$NODE_RUN/$name.pid"
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	kill -TERM "${pids[@]}" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "${pids[@]}" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "${pids[@]}" 2>/dev/null
	return 0
}

log "stopping kubelet, kube-proxy, the control plane"
stop kubelet kube-proxy kube-scheduler kube-controller-manager

if [ -S "$SOCK" ]; then
	log "removing containerd's containers"
	ctr() { command ctr --address "$SOCK" "$@"; }
	for ns in $(ctr namespaces ls -q 2>/dev/null); do
		for t in $(ctr -n "$ns" tasks ls -q 2>/dev/null); do
			ctr -n "$ns" tasks kill -s SIGKILL "$t" >/dev/null 2>&1
		done
		# A killed task is deleted once it has exited (containerd's CRI
		# plugin may delete it first): 10 s at most.
		for _ in $(seq 50); do
			left=$(ctr -n "$ns" tasks ls -q 2>/dev/null)
			[ -n "$left" ] || break
			for t in $left; do ctr -n "$ns" tasks rm -f "$t" >/dev/null 2>&1; done
			sleep 0.2
		done
		ctr -n "$ns" containers ls -q 2>/dev/null | xargs -r ctr --address "$SOCK" -n "$ns" containers rm >/dev/null 2>&1
	done
fi
log "stopping containerd, kube-apiserver, etcd"
stop containerd kube-apiserver
stop etcd

# containerd's shims outlive containerd; the ones of this node's state only.
for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK" 2>/dev/null); do
	kill -KILL "$pid" 2>/dev/null
done

log "removing kube-proxy's iptables rules"
if [ -x "$BIN/kube-proxy-$KUBE_VERSION" ]; then
	"$BIN/kube-proxy-$KUBE_VERSION" --cleanup >/dev/null 2>&1
fi
for table in nat filter mangle; do
	for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ {print $2}'); do
		iptables -t "$table" -S 2>/dev/null | awk -v c="$chain" '$1 == "-A" && $0 ~ "-j " c "( |$)" {sub(/^-A/, "-D"); print}' |
			while read -r rule; do eval "iptables -t $table $rule" 2>/dev/null; done
	done
	for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ {print $2}'); do
		iptables -t "$table" -F "$chain" 2>/dev/null
	done
	for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ {print $2}'); do
		iptables -t "$table" -X "$chain" 2>/dev/null
	done
done

log "unmounting $NODE_STATE and $NODE_RUN"
for dir in "$NODE_STATE" "$NODE_RUN"; do
	# Deepest first.
	awk -v d="$dir" '$2 == d || index($2, d "/") == 1 {print $2}' /proc/self/mounts | sort -r |
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
done

log "removing bridge $BRIDGE and pod veths"
ip link del "$BRIDGE" 2>/dev/null
rm -rf "$NODE_STATE"
if [ -f "$NODE_RUN/ip_forward" ]; then
	cat "$NODE_RUN/ip_forward" >/proc/sys/net/ipv4/ip_forward
fi
rm -rf "$NODE_RUN"
# containerd 1.6 puts its shims' sockets under /run/containerd/s whatever its
# state directory: remove what is left there only when it is empty (a
# containerd of the machine may be using it).
rmdir /run/containerd/s /run/containerd/fifo /run/containerd 2>/dev/null
log "down"
