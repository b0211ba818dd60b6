#!/usr/bin/env bash
# Starts, stops or shows the services with the test suite's settings (test.env), so that a
# developer can keep them running between test runs: the tests reuse running services and
# leave them running; services the tests started themselves are stopped at the run's end.
#
# Usage: test-services.sh start | stop | status | clean [kafka|cassandra|kube|node|prometheus ...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../.."
set -a
source "$here/test.env"
set +a
ONCESTREAM_LOCAL_DIR=$(pwd)/$ONCESTREAM_LOCAL_DIR
export ONCESTREAM_LOCAL_DIR
action=${1:?usage: $0 start|stop|status|clean [kafka|cassandra|kube|node|prometheus ...]}
shift
services=("$@")
if [ ${#services[@]} -eq 0 ]; then
  case "$action" in
    start) "$here/images.sh" build; services=(kafka cassandra kube node prometheus) ;;
    *) services=(prometheus node kube cassandra kafka) ;;
  esac
fi
rc=0
for s in "${services[@]}"; do
  "$here/$s.sh" "$action" || rc=$?
done
exit $rc
