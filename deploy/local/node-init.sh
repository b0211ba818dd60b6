#!/usr/bin/env bash
# First process (PID 1) of the node's own PID and mount namespaces; started by node.sh.
# Makes /run, /var/log, /var/lib/cni and the kubelet's kernel settings private, runs
# containerd, the kubelet and kube-proxy (Service addresses, as iptables rules of the stack's
# own network namespace), and on SIGTERM stops kube-proxy, the kubelet, every container and
# containerd in that order. Its exit ends the namespace and whatever is still in it.
#
# Usage: node-init.sh DATA_DIR KUBELET KUBECONFIG NODE_NAME NODE_IP PV_DIR KUBE_PROXY PROXY_KUBECONFIG POD_CIDR
set -uo pipefail
data=$1 kubelet=$2 kubeconfig=$3 node_name=$4 node_ip=$5 pv_dir=$6 kube_proxy=$7 proxy_kubeconfig=$8 pod_cidr=$9

say() { printf '[node-init] %s\n' "$*"; }

private_mounts() {
  mount -t tmpfs -o mode=755 tmpfs /run
  mount --bind "$data/log" /var/log
  mkdir -p /var/lib/cni
  mount --bind "$data/cni-lib" /var/lib/cni
  mount --bind "$pv_dir" /tmp/hostpath_pv
  local key
  for key in vm/overcommit_memory kernel/panic kernel/panic_on_oops; do
    mount --bind "$data/sysctl/${key##*/}" "/proc/sys/$key"
  done
}

kubelet_pid="" containerd_pid="" proxy_pid=""

shutdown() {
  say "stopping: kube-proxy, kubelet, containers, containerd"
  [ -n "$proxy_pid" ] && kill -TERM "$proxy_pid" 2>/dev/null
  wait "$proxy_pid" 2>/dev/null
  [ -n "$kubelet_pid" ] && kill -TERM "$kubelet_pid" 2>/dev/null
  wait "$kubelet_pid" 2>/dev/null
  # Every container's first process; killing it ends that container's PID namespace.
  ctr -n k8s.io tasks ls 2>/dev/null | awk 'NR > 1 {print $2}' | while read -r pid; do
    kill -KILL "$pid" 2>/dev/null
  done
  [ -n "$containerd_pid" ] && kill -TERM "$containerd_pid" 2>/dev/null
  wait "$containerd_pid" 2>/dev/null
  say "stopped"
  exit 0
}
trap shutdown TERM INT

private_mounts || { say "ERROR: could not make the node's private mounts"; exit 1; }
# The pods' DNS: the stack's own names, nothing forwarded anywhere.
dnsmasq --keep-in-foreground --no-resolv --no-hosts --bind-interfaces --listen-address "$node_ip" \
  --port 53 --local '/#/' --host-record "kafka,$node_ip" --host-record "cassandra,$node_ip" \
  --pid-file= --user=root --log-facility=- >> "$data/dnsmasq.log" 2>&1 &
containerd --config "$data/containerd.toml" >> "$data/containerd.log" 2>&1 &
containerd_pid=$!
for _ in $(seq 1 100); do
  [ -S /run/containerd/containerd.sock ] && break
  sleep 0.1
done
say "containerd pid $containerd_pid"
"$kubelet" --config "$data/kubelet.yaml" --kubeconfig "$kubeconfig" --root-dir "$data/kubelet" \
  --cert-dir "$data/kubelet/pki" --hostname-override "$node_name" --node-ip "$node_ip" \
  --v=1 >> "$data/kubelet.log" 2>&1 &
kubelet_pid=$!
say "kubelet pid $kubelet_pid"
# No conntrack table sizes or timeouts are set: those are the machine's, not the namespace's.
"$kube_proxy" --kubeconfig "$proxy_kubeconfig" --hostname-override "$node_name" --proxy-mode iptables \
  --cluster-cidr "$pod_cidr" --nodeport-addresses primary --conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 \
  --conntrack-tcp-timeout-close-wait 0 --conntrack-udp-timeout 0 --conntrack-udp-timeout-stream 0 \
  --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256 \
  --v=1 >> "$data/kube-proxy.log" 2>&1 &
proxy_pid=$!
say "kube-proxy pid $proxy_pid"
alive() { kill -0 "$kubelet_pid" 2>/dev/null && kill -0 "$containerd_pid" 2>/dev/null && kill -0 "$proxy_pid" 2>/dev/null; }
while alive; do
  wait -n 2>/dev/null || true
done
kill -0 "$kubelet_pid" 2>/dev/null || say "ERROR: the kubelet exited; see $data/kubelet.log"
kill -0 "$containerd_pid" 2>/dev/null || say "ERROR: containerd exited; see $data/containerd.log"
kill -0 "$proxy_pid" 2>/dev/null || say "ERROR: kube-proxy exited; see $data/kube-proxy.log"
shutdown
