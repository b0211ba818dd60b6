#!/usr/bin/env bash
# The main job: Oncestream on a whole local stack, in one command.
#
# Brings up Kafka, Cassandra, a Kubernetes control plane and a real node (kubelet +
# containerd) in the stack's own network namespace, runs the operator, starts a steady
# producer of sample orders into the topic "orders", applies deploy/examples/paid-orders.yaml
# and shows the job's progress live. Ctrl-C (or `demo.sh stop` from another terminal) tears it
# all down; the data stays in .local/ until `demo.sh clean`.
#
# Usage: deploy/local/demo.sh [start [--detach] | stop | status | clean | restart operator | kubectl ARGS... | watch]
#   start      bring everything up, show progress until Ctrl-C (--detach: return after the
#              first batches and leave it running)
#   kubectl    kubectl with the demo's kubeconfig, e.g. `demo.sh kubectl get sj -w`
#   watch      show the live progress line again
#
# Settings (environment): DEMO_RATE=500 (orders per second), DEMO_PARTITIONS=6, and those of
# each service script (ports, heaps; see the top of kafka.sh, cassandra.sh, kube.sh, node.sh).
SERVICE=demo
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here="$ONCESTREAM_REPO/deploy/local"
rate=${DEMO_RATE:-500}
partitions=${DEMO_PARTITIONS:-6}
data="$ONCESTREAM_LOCAL_DIR/demo"
kube_data=${KUBE_DATA_DIR:-$ONCESTREAM_LOCAL_DIR/kube}
app="$ONCESTREAM_REPO/target/quarkus-app"
libs="$app/lib/main/*"

say() { printf '\033[1m==>\033[0m %s\n' "$*"; }

kubectl_() { KUBECONFIG="$kube_data/kubeconfig" "$("$here/kube-binaries.sh" path)/kubectl" "$@"; }

# demo_java ARGS...: the sample-data program on the application's own jars.
demo_java() { java -cp "$libs" "$here/demo/DemoOrders.java" "$@" 2> >(grep -iv 'slf4j' >&2); }

build_application() {
  local newest
  newest=$(find "$ONCESTREAM_REPO/src/main" "$ONCESTREAM_REPO/pom.xml" -newer "$app/quarkus-run.jar" -print -quit 2>/dev/null || true)
  if [ ! -f "$app/quarkus-run.jar" ] || [ -n "$newest" ]; then
    say "building Oncestream (mvn package: about 1 min; the first time also 2-3 min of Maven downloads)"
    (cd "$ONCESTREAM_REPO" && mvn -B -q -Dstyle.color=never -DskipTests package) || die "mvn package failed"
  fi
}

start_operator() {
  pid_alive "$data/operator.pid" && return 0
  say "installing the StreamJob CRD and the operator's RBAC; starting the operator as its ServiceAccount"
  kubectl_ apply -f "$ONCESTREAM_REPO/crds/streamjobs.oncestream.io-v1.yml" >/dev/null
  kubectl_ create namespace oncestream-system --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
  kubectl_ apply -f "$ONCESTREAM_REPO/deploy/operator/rbac.yaml" >/dev/null
  kubectl_ wait --for=condition=Established --timeout=60s crd/streamjobs.oncestream.io >/dev/null
  local token
  token=$(kubectl_ create token oncestream-operator -n oncestream-system --duration 24h) || die "cannot get a token for the operator"
  KUBECONFIG="$kube_data/kubeconfig" "$("$here/kube-binaries.sh" path)/kubectl" config view --raw --minify \
    | sed -e "s/^\(\s*token:\).*/\1 $token/" -e "s/namespace: default/namespace: oncestream-system/" > "$data/operator.kubeconfig"
  chmod 600 "$data/operator.kubeconfig"
  keep_log "$data/operator.log"
  : > "$data/operator.log"
  # One operator, so no leader election is needed.
  start_daemon "$data/operator.pid" "$data/operator.log" \
    env KUBECONFIG="$data/operator.kubeconfig" java -Xmx256m -Dquarkus.http.host=127.0.0.1 -Doncestream.operator.poll-interval=2s \
    -Doncestream.operator.leader-election.enabled=false -jar "$app/quarkus-run.jar" operator
  wait_until 120 "operator" "$data/operator.pid" "$data/operator.log" -- \
    grep -q "'streamjob' controller started" "$data/operator.log"
}

start_producer() {
  pid_alive "$data/producer.pid" && return 0
  say "creating table shop.paid_orders; producing $rate sample orders/s into topic orders ($partitions partitions)"
  demo_java schema "$STACK_IP:${CASSANDRA_PORT:-9042}" datacenter1 || die "could not create the demo's table"
  : > "$data/producer.log"
  start_daemon "$data/producer.pid" "$data/producer.log" \
    java -cp "$libs" "$here/demo/DemoOrders.java" produce "$STACK_IP:${KAFKA_PORT:-9092}" orders "$partitions" "$rate"
}

# status_fields: phase|batch|lag|read|written|filtered out, from the job's status.
status_fields() {
  kubectl_ get sj paid-orders -o jsonpath='{.status.phase}|{.status.batchId}|{.status.lag}|{.status.totals.read}|{.status.totals.written}|{.status.totals.filteredOut}' 2>/dev/null || true
}

# watch [SECONDS]: the live progress line (a refreshing line in a terminal, a line every 5 s
# otherwise). Rates are the totals' growth over the last ~10 s, as a person would count them.
watch_progress() {
  local seconds=${1:-0} start=$SECONDS
  local -a times=() reads=() writes=()
  while (( seconds == 0 || SECONDS - start < seconds )); do
    local phase batch lag read written filtered now line
    IFS='|' read -r phase batch lag read written filtered <<< "$(status_fields)"
    now=$(date +%s.%N)
    # A restarted worker starts its totals again: count from there.
    if (( ${#reads[@]} > 0 )) && (( ${read:-0} < ${reads[-1]} )); then times=(); reads=(); writes=(); fi
    times+=("$now"); reads+=("${read:-0}"); writes+=("${written:-0}")
    if (( ${#times[@]} > 10 )); then times=("${times[@]:1}"); reads=("${reads[@]:1}"); writes=("${writes[@]:1}"); fi
    line=$(awk -v p="${phase:--}" -v b="${batch:--}" -v l="${lag:--}" -v r="${read:-0}" -v w="${written:-0}" -v f="${filtered:-0}" \
      -v t0="${times[0]}" -v t1="$now" -v r0="${reads[0]}" -v w0="${writes[0]}" 'BEGIN {
        dt = t1 - t0; ri = dt > 0 ? (r - r0) / dt : 0; wi = dt > 0 ? (w - w0) / dt : 0
        printf "phase %-9s batch %-6s lag %-6s read %6.0f rec/s  written %6.0f rows/s  totals: read %d, written %d, filtered out %d", p, b, l, ri, wi, r, w, f }')
    if [ -t 1 ]; then
      printf '\r\033[K%s' "$line"
      sleep 1
    else
      echo "$line"
      sleep 5
    fi
  done
  [ -t 1 ] && echo
  return 0
}

teardown() {
  trap - INT TERM
  echo
  say "stopping the demo"
  kubectl_ delete -f "$ONCESTREAM_REPO/deploy/examples/paid-orders.yaml" --wait=false >/dev/null 2>&1 || true
  stop_pid "$data/producer.pid" "producer" 10
  stop_pid "$data/operator.pid" "operator" 20
  "$here/prometheus.sh" stop || true
  "$here/node.sh" stop || true
  "$here/kube.sh" stop || true
  "$here/cassandra.sh" stop || true
  "$here/kafka.sh" stop || true
  "$here/netns.sh" stop || true
  say "stopped; data kept in $ONCESTREAM_LOCAL_DIR (deploy/local/demo.sh clean removes it)"
}

start() {
  local detach=${1:-}
  [ "$(id -u)" = 0 ] || die "the demo needs root: its stack runs in a network namespace, pods in real containers"
  "$here/prerequisites.sh" ensure
  mkdir -p "$data"
  local t0=$SECONDS
  if ! "$here/kube-binaries.sh" path >/dev/null 2>&1; then
    say "first run: building kube-apiserver, etcd, kubelet, kubectl, ... from Go modules (6-12 minutes on 2 cores, once)"
  fi
  "$here/kube-binaries.sh" build >/dev/null
  build_application
  say "building the images (pause, a JRE base from this machine's JDK, src/main/docker/Dockerfile)"
  "$here/images.sh" build
  say "starting Kafka, Cassandra, the control plane and the node in network namespace $NETNS ($STACK_IP)"
  "$here/kafka.sh" start
  "$here/cassandra.sh" start
  "$here/kube.sh" start
  "$here/node.sh" start
  start_operator
  PROMETHEUS_OPERATOR_TARGET=127.0.0.1:8080 PROMETHEUS_RULES="$ONCESTREAM_REPO/deploy/monitoring/oncestream-alerts.yaml" \
    "$here/prometheus.sh" start
  start_producer
  local up=$((SECONDS - t0))
  say "stack up after ${up} s; applying deploy/examples/paid-orders.yaml"
  trap teardown INT TERM
  kubectl_ apply -f "$ONCESTREAM_REPO/deploy/examples/paid-orders.yaml"
  local applied=$SECONDS
  until [ "$(kubectl_ get sj paid-orders -o jsonpath='{.status.batchId}' 2>/dev/null || true)" -ge 0 ] 2>/dev/null; do
    if (( SECONDS - applied > 300 )); then
      kubectl_ get sj,pods -o wide
      die "no committed batch after 300 s; see kubectl describe sj paid-orders and the pods' logs"
    fi
    [ -t 1 ] && printf '\r\033[Kwaiting for the first committed batch (%d s): %s' $((SECONDS - applied)) \
      "$(kubectl_ get pods -l oncestream.io/job=paid-orders --no-headers 2>/dev/null | awk '{printf "%s %s  ", $1, $3}')"
    sleep 1
  done
  [ -t 1 ] && echo
  say "first batch committed $((SECONDS - applied)) s after kubectl apply"
  watch_progress 15
  echo
  say "a sample of the table"
  demo_java sample "$STACK_IP:${CASSANDRA_PORT:-9042}" datacenter1 8 || true
  local kc="$kube_data/kubeconfig" bin
  bin=$("$here/kube-binaries.sh" path)
  cat <<EOF

Try, in another terminal (as root):
  deploy/local/demo.sh kubectl get sj -w              # batches and lag, live
  deploy/local/demo.sh kubectl get pods -o wide       # the workers, each with its own address
  deploy/local/demo.sh kubectl delete pod paid-orders-1   # a worker dies; it resumes from its checkpoint
  deploy/local/cassandra.sh stop; sleep 30; deploy/local/cassandra.sh start
                                                      # the job goes Degraded, then Running, nothing lost
  deploy/local/demo.sh kubectl describe sj paid-orders    # conditions and events
  deploy/local/demo.sh restart operator               # the operator alone; the workers keep going
Prometheus (scraping the operator and the workers, alert rules of docs/monitoring.md loaded):
  http://$STACK_IP:9090 from this machine, e.g. the seconds the job is behind:
  curl -s 'http://$STACK_IP:9090/api/v1/query?query=oncestream_job_lag_seconds'
or use kubectl directly: export KUBECONFIG=$kc PATH=$bin:\$PATH
Stop everything with Ctrl-C here, or: deploy/local/demo.sh stop

EOF
  if [ "$detach" = "--detach" ]; then
    trap - INT TERM
    return 0
  fi
  watch_progress 0
}

case "${1:-start}" in
  start) shift || true; start "${1:-}" ;;
  stop) teardown ;;
  status)
    rc=0
    for s in netns kafka cassandra kube node; do "$here/$s.sh" status || rc=$?; done
    pid_alive "$data/operator.pid" && echo "operator: running, pid $(cat "$data/operator.pid")" || { echo "operator: not running"; rc=3; }
    pid_alive "$data/producer.pid" && echo "producer: running, pid $(cat "$data/producer.pid")" || echo "producer: not running"
    exit $rc
    ;;
  clean) teardown; rm -rf "$ONCESTREAM_LOCAL_DIR"; log "removed $ONCESTREAM_LOCAL_DIR" ;;
  restart)
    # As operations people do: the operator alone, while the job's workers keep running.
    [ "${2:-}" = operator ] || { echo "usage: $0 restart operator" >&2; exit 2; }
    pid_alive "$data/operator.pid" || die "the operator is not running (deploy/local/demo.sh start)"
    stop_pid "$data/operator.pid" "operator" 20
    start_operator
    say "operator restarted (its previous log: $data/operator.log.1)"
    ;;
  kubectl) shift; kubectl_ "$@" ;;
  watch) watch_progress 0 ;;
  *) echo "usage: $0 [start [--detach] | stop | status | clean | restart operator | kubectl ARGS... | watch]" >&2; exit 2 ;;
esac
