#!/usr/bin/env bash
# Renders deploy/operator/operator.yaml from the Helm chart (helm/oncestream) with its default
# values: the namespace oncestream-system, the StreamJob CRD, the operator's ServiceAccount,
# RBAC, settings, metrics Service and Deployment, for `kubectl apply -f`. HelmChartIT renders
# it again and fails when the committed file differs.
#
# Usage: deploy/operator/render.sh [OUTPUT]   (default: deploy/operator/operator.yaml)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$repo/deploy/operator/operator.yaml}
helm="$("$repo/deploy/local/kube-binaries.sh" build)/helm"
{
  cat <<'HEAD'
# The Oncestream operator for `kubectl apply -f deploy/operator/operator.yaml`: namespace,
# StreamJob CRD, ServiceAccount, cluster-wide RBAC, settings, metrics Service and Deployment.
# Rendered from helm/oncestream with its default values by deploy/operator/render.sh (do not
# edit by hand; HelmChartIT checks it). For other settings use the chart, or edit the
# ConfigMap oncestream-operator (application.properties) and restart the Deployment.
---
apiVersion: v1
kind: Namespace
metadata:
  name: oncestream-system
  labels:
    app.kubernetes.io/part-of: oncestream
HEAD
  "$helm" template oncestream "$repo/helm/oncestream" --namespace oncestream-system --include-crds
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out" >&2
