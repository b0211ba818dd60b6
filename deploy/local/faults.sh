#!/usr/bin/env bash
# Network partitions for fault tests, made only inside the stack's own network namespace
# (netns.sh): the packets a pod of the stack sends to one of the stack's ports are dropped (not
# refused: the client sees nothing and times out, as behind a failed switch or a firewall). The
# rules live in a chain of their own, ONCESTREAM-FAULTS, ahead of kube-proxy's rules in the
# namespace's INPUT; nothing outside the namespace is touched, and only pod addresses of the
# stack (ONCESTREAM_POD_CIDR) are accepted as sources.
#
# Usage: faults.sh drop POD_IP PORT | heal POD_IP PORT | heal-all | list
#   drop      drop every packet from POD_IP to the stack's PORT (e.g. 9042 Cassandra,
#             9092 Kafka, 6443 the API server), on open connections too
#   heal      remove that rule
#   heal-all  remove every rule of the chain
#   list      print the chain's rules
#
# This machine's kernel has no netem qdisc (tc delay); a slow broker is made by pausing its
# process instead (see KafkaBroker.slow in the tests).
SERVICE=faults
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

chain=ONCESTREAM-FAULTS

in_ns() {
  [ -e "/run/netns/$NETNS" ] || die "the stack's network namespace $NETNS does not exist (netns.sh start)"
  nsenter --net="/run/netns/$NETNS" -- "$@"
}

ip_to_int() {
  local IFS=.
  # shellcheck disable=SC2206
  local o=($1)
  [ "${#o[@]}" = 4 ] || return 1
  local x
  for x in "${o[@]}"; do
    [[ "$x" =~ ^[0-9]+$ ]] && [ "$x" -le 255 ] || return 1
  done
  echo $(((o[0] << 24) | (o[1] << 16) | (o[2] << 8) | o[3]))
}

# A pod address of this stack, or die: faults are never aimed at anything else.
require_pod_ip() {
  local ip=$1 net=${POD_CIDR%/*} bits=${POD_CIDR#*/} a n mask
  a=$(ip_to_int "$ip") || die "'$ip' is not an IPv4 address"
  n=$(ip_to_int "$net") || die "ONCESTREAM_POD_CIDR '$POD_CIDR' is not an IPv4 range"
  mask=$(((0xffffffff << (32 - bits)) & 0xffffffff))
  [ $((a & mask)) = $((n & mask)) ] || die "$ip is not a pod address of this stack ($POD_CIDR)"
}

require_port() {
  [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 65535 ] || die "'$1' is not a port"
}

ensure_chain() {
  in_ns iptables -w -N "$chain" 2>/dev/null || true
  in_ns iptables -w -C INPUT -j "$chain" 2>/dev/null || in_ns iptables -w -I INPUT 1 -j "$chain"
}

rule() {
  echo -s "$1/32" -p tcp --dport "$2" -m comment --comment oncestream-fault -j DROP
}

case "${1:-}" in
  drop)
    [ $# = 3 ] || die "usage: $0 drop POD_IP PORT"
    require_pod_ip "$2"; require_port "$3"; ensure_chain
    # shellcheck disable=SC2046
    if ! in_ns iptables -w -C "$chain" $(rule "$2" "$3") 2>/dev/null; then
      in_ns iptables -w -A "$chain" $(rule "$2" "$3")
    fi
    log "dropping packets from $2 to port $3 in $NETNS"
    ;;
  heal)
    [ $# = 3 ] || die "usage: $0 heal POD_IP PORT"
    require_pod_ip "$2"; require_port "$3"
    # shellcheck disable=SC2046
    while in_ns iptables -w -D "$chain" $(rule "$2" "$3") 2>/dev/null; do :; done
    log "packets from $2 to port $3 pass again"
    ;;
  heal-all)
    # No chain yet: nothing to heal.
    if in_ns iptables -w -S "$chain" >/dev/null 2>&1; then
      in_ns iptables -w -F "$chain"
    fi
    ;;
  list)
    in_ns iptables -w -S "$chain" 2>/dev/null || true
    ;;
  *) echo "usage: $0 drop POD_IP PORT | heal POD_IP PORT | heal-all | list" >&2; exit 2 ;;
esac
