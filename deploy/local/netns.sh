#!/usr/bin/env bash
# The local stack's own network: a network namespace that every service of the stack runs
# in (Kafka, Cassandra, the control plane, the node and its pods), joined to this machine by
# one veth pair. Nothing of the stack listens on the machine's own interfaces, and no traffic
# leaves for anywhere but this namespace and the pods' namespaces inside it.
#
#   this machine (tests, kubectl, the operator as a process)
#     │ veth  ONCESTREAM_GATEWAY_IP (198.18.0.1/30)
#     ▼
#   netns ONCESTREAM_NETNS ── ONCESTREAM_IP (198.18.0.2): Kafka, Cassandra, etcd,
#     │                        kube-apiserver, controller-manager, scheduler, kubelet
#     ├─ bridge ──► pods on ONCESTREAM_POD_CIDR (198.18.1.0/24), one address each
#     └─ lo: ONCESTREAM_EXTRA_CIDR (198.18.3.0/24), extra service addresses (e.g. the nodes
#            of cassandra-cluster.sh, each on its own address)
#
# 198.18.0.0/15 is reserved for network tests (RFC 2544): never a private range, never
# routed beyond this machine. This machine gets two routes via the veth: to the pod range,
# so that tests and an operator running as a process reach podIP:8080, and to the extra range.
#
# Usage: netns.sh start | stop | status | env | exec COMMAND...
#   exec   run COMMAND inside the namespace (e.g. `netns.sh exec ss -ltn`)
#
# Settings (environment):
#   ONCESTREAM_NETNS=oncestream  ONCESTREAM_IP=198.18.0.2  ONCESTREAM_GATEWAY_IP=198.18.0.1
#   ONCESTREAM_POD_CIDR=198.18.1.0/24  ONCESTREAM_EXTRA_CIDR=198.18.3.0/24
SERVICE=netns
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

veth_host="${NETNS:0:12}-h"
veth_ns="${NETNS:0:12}-n"

require_root() {
  [ "$(id -u)" = 0 ] || die "the local stack needs root to make its network namespace (ip netns); run as root"
  command -v ip >/dev/null 2>&1 || die "ip is not on PATH (apt-get install iproute2)"
  command -v nsenter >/dev/null 2>&1 || die "nsenter is not on PATH (apt-get install util-linux)"
}

start() {
  require_root
  case "$EXTRA_CIDR" in
    198.18.*|198.19.*) ;;
    *) die "ONCESTREAM_EXTRA_CIDR=$EXTRA_CIDR is outside 198.18.0.0/15, the range the stack keeps to" ;;
  esac
  if [ ! -e "/run/netns/$NETNS" ]; then
    log "creating network namespace $NETNS ($STACK_IP, pods on $POD_CIDR)"
    ip netns add "$NETNS"
  fi
  if ! ip link show "$veth_host" >/dev/null 2>&1; then
    ip link add "$veth_host" type veth peer name "$veth_ns" netns "$NETNS"
  fi
  ip addr replace "$GATEWAY_IP/30" dev "$veth_host"
  ip link set "$veth_host" up
  ip netns exec "$NETNS" ip link set lo up
  ip netns exec "$NETNS" ip addr replace "$STACK_IP/30" dev "$veth_ns"
  ip netns exec "$NETNS" ip link set "$veth_ns" up
  # Forwarding between the veth and the pod bridge, inside the namespace only (per-namespace setting).
  ip netns exec "$NETNS" sysctl -qw net.ipv4.ip_forward=1
  ip route replace "$POD_CIDR" via "$STACK_IP" dev "$veth_host"
  # An address with a prefix on a loopback device makes the whole prefix local (the kernel adds
  # a local route for it): every address of the extra range can be bound in the namespace.
  ip netns exec "$NETNS" ip addr replace "$(extra_ip 1)/${EXTRA_CIDR#*/}" dev lo
  ip route replace "$EXTRA_CIDR" via "$STACK_IP" dev "$veth_host"
  # Service addresses for processes of the namespace itself (the API server calling the admission
  # webhook's Service): a route through a device, so that kube-proxy's DNAT in OUTPUT can send the
  # connection on to a pod. The device is a bridge without ports (this kernel has no dummy
  # devices): a Service address that no rule rewrites is dropped there and never leaves the namespace.
  if ! ip netns exec "$NETNS" ip link show oncestream-svc >/dev/null 2>&1; then
    ip netns exec "$NETNS" ip link add oncestream-svc type bridge
  fi
  ip netns exec "$NETNS" ip link set oncestream-svc up
  ip netns exec "$NETNS" ip route replace "$SERVICE_CIDR" dev oncestream-svc src "$STACK_IP"
}

stop() {
  [ -e "/run/netns/$NETNS" ] || return 0
  ip route del "$POD_CIDR" via "$STACK_IP" dev "$veth_host" 2>/dev/null || true
  ip route del "$EXTRA_CIDR" via "$STACK_IP" dev "$veth_host" 2>/dev/null || true
  ip link del "$veth_host" 2>/dev/null || true
  ip netns del "$NETNS" 2>/dev/null || true
  log "removed network namespace $NETNS"
}

status() {
  if [ -e "/run/netns/$NETNS" ] && ip link show "$veth_host" >/dev/null 2>&1; then
    echo "netns $NETNS: up, stack $STACK_IP, gateway $GATEWAY_IP, pods $POD_CIDR, extra $EXTRA_CIDR"
  else
    echo "netns $NETNS: down"
    return 3
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) printf 'ONCESTREAM_NETNS=%s\nONCESTREAM_IP=%s\nONCESTREAM_POD_CIDR=%s\nONCESTREAM_EXTRA_CIDR=%s\n' "$NETNS" "$STACK_IP" "$POD_CIDR" "$EXTRA_CIDR" ;;
  exec) shift; exec nsenter --net="/run/netns/$NETNS" -- "$@" ;;
  *) echo "usage: $0 start|stop|status|env|exec COMMAND..." >&2; exit 2 ;;
esac
