#!/usr/bin/env bash
# What the demo and the test suite need on the machine, checked before anything long starts:
# the one list of tools and the Debian packages that bring them, Go for the Kubernetes
# binaries, disk, memory and the kernel features the local node uses. demo.sh, test.sh and
# .ci/run all call it.
#
# Usage: deploy/local/prerequisites.sh check     report what is missing; exit 1 if anything is
#        deploy/local/prerequisites.sh ensure    install missing packages with apt-get when root
#                                                on Debian/Ubuntu, else stop with the command to run
set -euo pipefail
mode=${1:-check}
case "$mode" in check|ensure) ;; *) echo "usage: $0 check|ensure" >&2; exit 2 ;; esac

say() { printf '[prerequisites] %s\n' "$*" >&2; }

# command-or-file:package, one per line. A path (starting with /) is checked as an executable
# or a file; anything else as a command on PATH (or in /usr/sbin, where iptables and dnsmasq live).
REQUIRED='
java:openjdk-17-jdk-headless
mvn:maven
curl:curl
openssl:openssl
ip:iproute2
ss:iproute2
nsenter:util-linux
unshare:util-linux
containerd:containerd
ctr:containerd
runc:runc
/usr/lib/cni/bridge:containernetworking-plugins
buildah:buildah
dnsmasq:dnsmasq-base
iptables:iptables
gcc:gcc
/usr/lib/x86_64-linux-gnu/libc.a:libc6-dev
lua5.4:lua5.4
spin:spin
prometheus:prometheus
promtool:prometheus
'

present() {
  local what=$1
  case "$what" in
    /*) [ -e "$what" ] ;;
    *) command -v "$what" >/dev/null 2>&1 || [ -x "/usr/sbin/$what" ] || [ -x "/sbin/$what" ] ;;
  esac
}

missing_packages() {
  local line what package
  for line in $REQUIRED; do
    what=${line%%:*}
    package=${line#*:}
    present "$what" || echo "$package"
  done | sort -u
}

mapfile -t packages < <(missing_packages)
if [ ${#packages[@]} -gt 0 ]; then
  if [ "$mode" = ensure ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${packages[*]} (apt-get, about a minute)"
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${packages[@]}" >&2
    mapfile -t packages < <(missing_packages)
  fi
  if [ ${#packages[@]} -gt 0 ]; then
    say "ERROR: missing Debian packages: ${packages[*]}"
    say "install them first:  sudo apt-get update && sudo apt-get install -y ${packages[*]}"
    exit 1
  fi
fi

problems=()
java_major=$(java -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')
[ "${java_major%%.*}" -ge 17 ] 2>/dev/null || problems+=("Java 17 or newer is needed, found ${java_major:-none}")

# Go builds the pinned Kubernetes binaries once (deploy/local/kube-build); its module needs Go 1.25.
if [ ! -x "$(dirname "${BASH_SOURCE[0]}")/kube-binaries.sh" ] || ! "$(dirname "${BASH_SOURCE[0]}")/kube-binaries.sh" path >/dev/null 2>&1; then
  if ! command -v go >/dev/null 2>&1; then
    problems+=("Go 1.25 or newer is needed once, to build the Kubernetes binaries (https://go.dev/dl or the distribution's golang package)")
  else
    go_version=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
    go_minor=$(echo "$go_version" | cut -d. -f2)
    [ "$(echo "$go_version" | cut -d. -f1)" -gt 1 ] 2>/dev/null || [ "${go_minor:-0}" -ge 25 ] 2>/dev/null \
      || problems+=("Go 1.25 or newer is needed to build the Kubernetes binaries, found $go_version")
  fi
fi

[ "$(id -u)" = 0 ] || problems+=("root is needed: the stack makes a network namespace and mounts, and runs containers")

free_gb() { df -Pk "$1" 2>/dev/null | awk 'NR == 2 {print int($4 / 1048576)}'; }
cache=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}
mkdir -p "$cache"
[ "$(free_gb "$cache")" -ge 5 ] || problems+=("5 GB of free disk are needed under $cache (Go build cache and binaries), found $(free_gb "$cache") GB")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ "$(free_gb "$repo")" -ge 3 ] || problems+=("3 GB of free disk are needed under $repo (build, images, service data), found $(free_gb "$repo") GB")
mem_gb=$(awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo)
[ "${mem_gb:-0}" -ge 4 ] || problems+=("4 GB of available memory are needed for the stack, found ${mem_gb:-0} GB")

# The node: network namespaces, overlay mounts for containers, cgroups for their limits.
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || problems+=("the kernel has no overlay filesystem (containerd's snapshotter needs it)")
[ -d /sys/fs/cgroup ] && [ -n "$(ls -A /sys/fs/cgroup 2>/dev/null)" ] || problems+=("no cgroup hierarchy is mounted at /sys/fs/cgroup (the kubelet needs one)")
[ -e /proc/self/ns/net ] || problems+=("the kernel has no network namespaces")

if [ ${#problems[@]} -gt 0 ]; then
  for p in "${problems[@]}"; do say "ERROR: $p"; done
  exit 1
fi
say "all there (Java $java_major, ${mem_gb} GB memory available)"
