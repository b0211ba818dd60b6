#!/usr/bin/env bash
# Runs the whole test suite: unit tests (*Test), then integration and end-to-end tests
# (*IT, *E2E) against a real Kafka broker, Cassandra node, Kubernetes control plane and node
# (kubelet + containerd) that the tests start once per run, in the test stack's own network
# namespace (test.env), and stop at its end.
#
# Usage: deploy/local/test.sh [extra Maven arguments, e.g. -Dit.test=KafkaSmokeIT]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

# Everything the suite needs, before anything long starts (installs missing packages as root).
deploy/local/prerequisites.sh ensure

# The Kubernetes binaries first, in the open: the first build takes 6-12 minutes on 2 cores.
start=$SECONDS
deploy/local/kube-binaries.sh build >/dev/null
echo "[test] Kubernetes binaries ready after $((SECONDS - start)) s"

# The test stack's network namespace (test.env): made by the first service the tests start,
# removed after the run unless it was already there (a developer's test-services.sh start).
set -a
source deploy/local/test.env
set +a
net_was_up=false
[ -e "/run/netns/$ONCESTREAM_NETNS" ] && net_was_up=true
status=0
echo "[test] mvn verify: about 1 min to build (the first time also 2-3 min of Maven downloads), then the tests"
mvn -B -Dstyle.color=never verify "$@" || status=$?
if [ "$net_was_up" = false ]; then
  ONCESTREAM_LOCAL_DIR="$repo/$ONCESTREAM_LOCAL_DIR" deploy/local/netns.sh stop || true
fi
exit $status
