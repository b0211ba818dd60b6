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

missing=()
for tool in java mvn curl openssl ss ip nsenter unshare containerd runc ctr buildah gcc; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[test] ERROR: missing on PATH: ${missing[*]} (Debian: apt-get install openjdk-17-jdk-headless maven curl openssl iproute2 containerd runc containernetworking-plugins buildah dnsmasq-base gcc libc6-dev; .ci/run installs them)" >&2
  exit 1
fi
java_major=$(java -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')
if [ "${java_major%%.*}" -lt 17 ]; then
  echo "[test] ERROR: Java 17 or newer is needed, found $java_major" >&2
  exit 1
fi

# The Kubernetes binaries first, in the open: the first build takes 10-25 minutes.
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
mvn -B -Dstyle.color=never verify "$@" || status=$?
if [ "$net_was_up" = false ]; then
  ONCESTREAM_LOCAL_DIR="$repo/$ONCESTREAM_LOCAL_DIR" deploy/local/netns.sh stop || true
fi
exit $status
