#!/usr/bin/env bash
# The main job: a local Oncestream demo on the embedded default stack.
#
# Today it starts the stack the demo will run on (Kafka, Cassandra, a Kubernetes control
# plane, each on loopback) and says where each listens. The StreamJob part -- apply a
# manifest, watch batches commit, kill workers, check the table -- is not built yet: it
# arrives with the worker engine and the operator.
#
# Usage: deploy/local/demo.sh [start|stop|status|clean]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
action=${1:-start}
case "$action" in
  start)
    "$here/kafka.sh" start
    "$here/cassandra.sh" start
    "$here/kube.sh" start
    echo
    "$here/kafka.sh" status
    "$here/cassandra.sh" status
    "$here/kube.sh" status
    echo
    echo "Not yet: the StreamJob demo (operator + workers moving Kafka records into Cassandra)"
    echo "is not implemented; the stack above is what it will run on."
    echo "Try:  KUBECONFIG=$("$here/kube.sh" env | sed -n 's/^KUBECONFIG=//p') $("$here/kube-binaries.sh" path)/kubectl get namespaces"
    echo "Stop: $0 stop"
    ;;
  stop|status|clean)
    rc=0
    for s in kube cassandra kafka; do "$here/$s.sh" "$action" || rc=$?; done
    exit $rc
    ;;
  *) echo "usage: $0 [start|stop|status|clean]" >&2; exit 2 ;;
esac
