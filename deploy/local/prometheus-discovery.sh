#!/usr/bin/env bash
# Pod discovery for the stack's Prometheus (prometheus.sh). Debian builds Prometheus without
# its Kubernetes service discovery, so this loop does what `kubernetes_sd_configs` with the
# usual annotation relabelling does: every INTERVAL seconds it lists the running pods through
# the API server and writes those annotated prometheus.io/scrape: "true" as a file_sd target
# file (address podIP:prometheus.io/port, path prometheus.io/path, labels namespace and pod).
#
# Usage: prometheus-discovery.sh KUBECTL KUBECONFIG OUT_JSON [INTERVAL]
set -uo pipefail
kubectl=$1 kubeconfig=$2 out=$3 interval=${4:-5}
template='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{" "}{.status.podIP}{" "}{.metadata.annotations.prometheus\.io/scrape}{" "}{.metadata.annotations.prometheus\.io/port}{" "}{.metadata.annotations.prometheus\.io/path}{"\n"}{end}'
while true; do
  if pods=$(KUBECONFIG="$kubeconfig" "$kubectl" get pods -A --field-selector=status.phase=Running -o jsonpath="$template" 2>/dev/null); then
    json="["
    sep=""
    while read -r ns name ip scrape port path; do
      [ "$scrape" = "true" ] && [ -n "$ip" ] && [ -n "$port" ] || continue
      json+="$sep{\"targets\":[\"$ip:$port\"],\"labels\":{\"__metrics_path__\":\"${path:-/metrics}\",\"namespace\":\"$ns\",\"pod\":\"$name\"}}"
      sep=","
    done <<< "$pods"
    json+="]"
    printf '%s\n' "$json" > "$out.tmp" && mv "$out.tmp" "$out"
  fi
  sleep "$interval"
done
