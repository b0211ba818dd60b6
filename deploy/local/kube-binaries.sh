#!/usr/bin/env bash
# Builds, once, the real Kubernetes binaries the tests and the demo run: kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl (Kubernetes 1.35.4), etcd 3.6.16 and helm 3.21.4, from
# Go modules pinned by deploy/local/kube-build/{go.mod,go.sum,etcd/go.*}.
#
# Binaries are cached under ~/.cache/oncestream/kube/<versions>/ and linked into the layout
# fabric8 kube-api-test expects: ${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/1.35.4-linux-amd64/.
# A second run finds them and returns at once. There is no fallback: if Go or the module
# proxy is missing, this fails and says so.
#
# Usage: kube-binaries.sh [build|path|clean]
#   build (default)  build what is missing, print the bin directory
#   path             print the bin directory (fail if not built)
#   clean            remove the cached binaries (not the Go module cache)
set -euo pipefail

K8S_VERSION=1.35.4
ETCD_VERSION=3.6.16
HELM_VERSION=3.21.4

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${ONCESTREAM_CACHE:-$HOME/.cache/oncestream}
bin="$cache/kube/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-helm-$HELM_VERSION"
apitest_dir="${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}/k8s/$K8S_VERSION-linux-amd64"
tools=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl etcd helm)
# As helm's own Makefile links it: its version, and the Kubernetes version of its client
# modules (v0.36) as the default that `helm template` and `helm lint` assume.
helm_ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION"
for v in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  helm_ldflags+=" -X $v.k8sVersionMajor=1 -X $v.k8sVersionMinor=36"
done

log() { printf '[kube-binaries] %s\n' "$*" >&2; }
die() { printf '[kube-binaries] ERROR: %s\n' "$*" >&2; exit 1; }

all_built() {
  local t
  for t in "${tools[@]}"; do [ -x "$bin/$t" ] || return 1; done
  [ "$(cat "$bin/helm.ldflags" 2>/dev/null)" = "$helm_ldflags" ]
}

link_for_kube_api_test() {
  mkdir -p "$apitest_dir"
  local t
  for t in kube-apiserver etcd kubectl; do ln -sfn "$bin/$t" "$apitest_dir/$t"; done
}

build() {
  if all_built; then
    link_for_kube_api_test
    echo "$bin"
    return
  fi
  command -v go >/dev/null 2>&1 || die "the 'go' command is not on PATH; it is needed once to build kube-apiserver, etcd, kubectl and helm from Go modules (install Go >= 1.25)"
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
  export GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build"
  mkdir -p "$bin.tmp"
  local started=$SECONDS
  local ld="-s -w"
  local v
  for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $v.gitVersion=v$K8S_VERSION -X $v.gitMajor=${K8S_VERSION%%.*}"
    ld+=" -X $v.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2) -X $v.gitTreeState=clean"
  done
  log "building Kubernetes $K8S_VERSION, etcd $ETCD_VERSION and helm $HELM_VERSION from Go modules"
  log "(first time only: 6-12 minutes and ~3 GB on 2 cores; cached in $cache)"
  local cmd
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
    if [ ! -x "$bin/$cmd" ]; then
      log "go build $cmd ..."
      (cd "$here/kube-build" && go build -trimpath -ldflags "$ld" -o "$bin.tmp/$cmd" "k8s.io/kubernetes/cmd/$cmd") \
        || die "go build of $cmd failed (is the Go module proxy reachable? see output above)"
      log "$cmd built after $((SECONDS - started)) s"
    fi
  done
  if [ ! -x "$bin/etcd" ]; then
    log "go build etcd ..."
    (cd "$here/kube-build/etcd" && go build -trimpath -ldflags "-s -w" -o "$bin.tmp/etcd" go.etcd.io/etcd/server/v3) \
      || die "go build of etcd failed (see output above)"
    log "etcd built after $((SECONDS - started)) s"
  fi
  if [ ! -x "$bin/helm" ] || [ "$(cat "$bin/helm.ldflags" 2>/dev/null)" != "$helm_ldflags" ]; then
    log "go install helm ..."
    GOBIN="$bin.tmp" go install -trimpath -ldflags "$helm_ldflags" "helm.sh/helm/v3/cmd/helm@v$HELM_VERSION" \
      || die "go install of helm failed (see output above)"
    echo "$helm_ldflags" > "$bin.tmp/helm.ldflags"
    log "helm built after $((SECONDS - started)) s"
  fi
  mkdir -p "$bin"
  for cmd in "${tools[@]}"; do
    [ -x "$bin.tmp/$cmd" ] && mv -f "$bin.tmp/$cmd" "$bin/$cmd"
  done
  [ -f "$bin.tmp/helm.ldflags" ] && mv -f "$bin.tmp/helm.ldflags" "$bin/helm.ldflags"
  rmdir "$bin.tmp" 2>/dev/null || true
  all_built || die "some binaries are missing from $bin after the build"
  link_for_kube_api_test
  log "done in $((SECONDS - started)) s: $bin"
  echo "$bin"
}

case "${1:-build}" in
  build) build ;;
  path) all_built || die "not built yet; run $0 build"; echo "$bin" ;;
  clean) rm -rf "$bin" "$bin.tmp" "$apitest_dir"; log "removed $bin" ;;
  *) die "usage: $0 [build|path|clean]" ;;
esac
