#!/usr/bin/env bash
# A Cassandra 5.0 cluster of CASSANDRA_CLUSTER_NODES nodes (3 by default) in the stack's network
# namespace, for the tests of a cluster's faults: each node a cassandra.sh node on its own
# address of ONCESTREAM_EXTRA_CIDR (netns.sh), node 1 the seed, small heaps, one data
# directory per node under CASSANDRA_CLUSTER_DIR. Apart from the stack's single node
# (cassandra.sh): its own addresses, data, JMX ports and cluster name.
#
# Usage: cassandra-cluster.sh start | stop | status | clean | env | start-node N | stop-node N
#   start        start every node that is not running, one after another (a node joins the
#                ring before the next starts); wait until each accepts CQL clients
#   stop         stop every node, all at once (SIGTERM, Cassandra drains)
#   status       exit 0 if every node runs; print each node's status
#   clean        stop every node and delete the cluster's data
#   env          print CASSANDRA_CLUSTER_CONTACT_POINTS=host:port,... CASSANDRA_DATACENTER and
#                CASSANDRA_NODE_<N>=host:port for other tools
#   start-node N / stop-node N   one node, on its data (a node's restart or outage)
#
# Settings (environment):
#   CASSANDRA_CLUSTER_NODES=3  CASSANDRA_CLUSTER_HEAP=320m
#   CASSANDRA_CLUSTER_DIR=$ONCESTREAM_LOCAL_DIR/cassandra-cluster
#   CASSANDRA_CLUSTER_JMX_BASE=7200 (node N's JMX port is base + N, on the namespace's 127.0.0.1)
SERVICE=cassandra-cluster
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

nodes=${CASSANDRA_CLUSTER_NODES:-3}
heap=${CASSANDRA_CLUSTER_HEAP:-320m}
dir=${CASSANDRA_CLUSTER_DIR:-$ONCESTREAM_LOCAL_DIR/cassandra-cluster}
# Absolute: Cassandra takes its configuration as a file:// URL.
[[ $dir = /* ]] || dir=$PWD/$dir
jmx_base=${CASSANDRA_CLUSTER_JMX_BASE:-7200}
port=9042
storage_port=7000

# node N COMMAND: cassandra.sh COMMAND with node N's settings.
node() {
  local n=$1
  [[ $n =~ ^[0-9]+$ ]] && (( n >= 1 && n <= nodes )) || die "no node '$n' (nodes 1 to $nodes)"
  # One cluster name for all nodes (so they form one ring), unique to this data directory (so
  # no other node joins it); node 1 is the seed.
  CASSANDRA_CLUSTER_NAME="oncestream-cluster-$(echo "$dir" | sha256sum | cut -c1-8)" \
  CASSANDRA_ADDRESS=$(extra_ip "$n") CASSANDRA_SEEDS="$(extra_ip 1):$storage_port" \
  CASSANDRA_PORT=$port CASSANDRA_STORAGE_PORT=$storage_port CASSANDRA_JMX_PORT=$((jmx_base + n)) \
  CASSANDRA_DATA_DIR="$dir/node$n" CASSANDRA_HEAP=$heap CASSANDRA_MEMTABLE_SPACE=48MiB \
  CASSANDRA_AUTO_BOOTSTRAP=false \
    "$ONCESTREAM_REPO/deploy/local/cassandra.sh" "${@:2}"
}
# A new cluster holds no data, so a joining node has nothing to stream (auto_bootstrap: false).
# A node whose data is deleted must not rejoin this way; clean deletes every node's together.

start() {
  local n start=$SECONDS
  for n in $(seq 1 "$nodes"); do
    node "$n" start
  done
  log "$nodes nodes ready after $((SECONDS - start))s"
}

# All nodes at once: each drains on its own, and a cluster that is going away needs no quorum.
stop() {
  local n pids=() rc=0
  for n in $(seq 1 "$nodes"); do
    node "$n" stop & pids+=($!)
  done
  for n in "${pids[@]}"; do
    wait "$n" || rc=$?
  done
  return $rc
}

status() {
  local n rc=0
  for n in $(seq 1 "$nodes"); do
    printf 'node %s: ' "$n"
    node "$n" status || rc=3
  done
  return $rc
}

env_lines() {
  local n points=()
  for n in $(seq 1 "$nodes"); do
    points+=("$(extra_ip "$n"):$port")
  done
  (IFS=,; printf 'CASSANDRA_CLUSTER_CONTACT_POINTS=%s\n' "${points[*]}")
  printf 'CASSANDRA_DATACENTER=datacenter1\n'
  for n in $(seq 1 "$nodes"); do
    printf 'CASSANDRA_NODE_%s=%s:%s\n' "$n" "$(extra_ip "$n")" "$port"
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  clean) stop; rm -rf "$dir"; log "removed $dir" ;;
  env) env_lines ;;
  start-node) node "${2:?usage: $0 start-node N}" start ;;
  stop-node) node "${2:?usage: $0 stop-node N}" stop ;;
  *) echo "usage: $0 start|stop|status|clean|env|start-node N|stop-node N" >&2; exit 2 ;;
esac
