#!/usr/bin/env bash
# Renders deploy/monitoring/oncestream-alerts.yaml, the alert rules of docs/monitoring.md for a
# Prometheus without the Prometheus Operator (rule_files:), from the Helm chart's template with
# its default thresholds (or the --set flags given). AlertRulesTest fails when the committed
# file differs from a render with the defaults.
#
# Usage: deploy/monitoring/render.sh [OUTPUT] [helm --set flags...]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$repo/deploy/monitoring/oncestream-alerts.yaml}
shift || true
helm="$("$repo/deploy/local/kube-binaries.sh" build)/helm"
{
  echo "# The alert rules of docs/monitoring.md (runbooks there) for Prometheus' rule_files. Rendered"
  echo "# from helm/oncestream/templates/_alerts.tpl by deploy/monitoring/render.sh; do not edit by hand."
  # The PrometheusRule's spec, one level less indented, is a plain rules file.
  "$helm" template oncestream "$repo/helm/oncestream" --show-only templates/prometheusrule.yaml \
    --set metrics.prometheusRule.enabled=true "$@" | sed -n '/^spec:$/,$p' | tail -n +2 | sed 's/^  //'
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out" >&2
