#!/usr/bin/env bash
# The operator over N StreamJobs: a control plane of its own (etcd, kube-apiserver with its
# audit log, kube-controller-manager creating every worker pod; no node and no scheduler, so
# the pods stay Pending and no worker is polled), the packaged operator as a process with
# its own ServiceAccount and RBAC, and io.oncestream.bench.operator.OperatorBenchmark, which creates
# the jobs through the API and prints: time until every job is observed with its children
# and pods, live heap after a full GC (and per job), CPU, reconciles and API requests at
# rest, and a cold start (operator killed, started again: time until every job was
# reconciled once, and the writes it made).
#
# Usage: deploy/local/operator-benchmark.sh --job-series N
#   only what each job's Prometheus series cost the operator (scrape CPU, page size, heap per
#   job), this build's way against the Micrometer meters it used before, in one process: no
#   control plane. A minute for 10,000 jobs.
#        deploy/local/operator-benchmark.sh N [--namespaces 10] [--parallelism 1]
#          [--rest-seconds 60] [--heap 3g] [--timeout-seconds 2400] [--running K] [--profile FILE.jfr] [--profile-burst FILE.jfr]
#          [--profile-cold FILE.jfr] [--cold-baseline DIR] [--keep]
#   --profile  a flight recording (JFR) of the operator over the rest window with running workers:
#           where its CPU goes (the recording costs some too: not a run whose figures to record)
#   --profile-burst  the same over the burst of changes, until every change is in its job's status
#           (it distorts the burst's figure far more: 19 s against 3 s at 4,000; for where the work goes only)
#   --profile-cold  the same over the cold start: the restarted operator records from its start
#           until it logs that it caught up (every job reconciled once)
#   --cold-baseline DIR  after the cold start, 3 rounds of cold starts of the build in DIR (another
#           checkout's target/quarkus-app, from 18a3e25 on: it must log "Caught up") and of this one,
#           alternating, over the same jobs and workers; prints both and the ratio of the medians
#   --keep  leave the control plane running afterwards (KUBECONFIG: kube.sh env, with the
#           settings below); by default it is stopped and its data deleted.
# Its stack (network namespace, addresses, data under target/operator-bench) is separate from
# the test suite's and the demo's: the three can run side by side.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
if [ "${1:-}" = --job-series ]; then
  n=${2:?usage: $0 --job-series N}
  echo "[operator-bench] building the operator and the benchmark"
  mvn -B -q -Dstyle.color=never test-compile dependency:build-classpath -Dmdep.outputFile=target/bench-classpath.txt \
    -Dmdep.includeScope=test > target/operator-bench-build.log 2>&1 || { cat target/operator-bench-build.log; exit 1; }
  exec java -Xmx2g -XX:+UseG1GC -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" \
    io.oncestream.operator.JobSeriesBenchmark "$n"
fi
jobs=${1:?usage: $0 N [--namespaces 10] [--parallelism 1] [--rest-seconds 60] [--heap 3g] [--keep]}
shift
[[ $jobs =~ ^[0-9]+$ ]] || { echo "N must be a number of StreamJobs, not '$jobs'" >&2; exit 2; }
keep=false
args=()
for a in "$@"; do
  if [ "$a" = --keep ]; then keep=true; else args+=("$a"); fi
done

# One connection per running worker on each side: the idle workers' server holds K of them, and a
# long-poll the operator gave up on stays open there until its wait ends, so up to 2K at once. A
# run of 10,000 running workers at 20,000 open files ran out: the JDK server's dispatcher, failing
# to accept, then spun on a cancelled key and answered nothing again (every ask timed out, 10,387
# sockets left in CLOSE_WAIT). A container gets far more (containerd: 1,048,576 or 524,288), but
# this shell may not raise its limit. So where 2K does not fit, the idle workers are spread over
# P processes: process p answers for 127.(1+p).0.0/16 on port 8080+p, to which a loopback-only
# DNAT rule (iptables, nat OUTPUT, removed on exit) sends the worker port of those addresses.
# The operator itself holds one connection per running worker (its long-poll's; a reconcile takes
# the answer the long-poll vouches for rather than asking on a second one): K + 2,000 must fit its
# limit.
running=0
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[$i]}" = --running ]; then running=${args[$((i + 1))]:-0}; fi
done
open_files=$(ulimit -n)
worker_processes=1
if [ "$open_files" != unlimited ]; then
  if (( running + 2000 > open_files )); then
    echo "[operator-bench] --running $running needs about $((running + 2000)) open files in the operator, and the limit here is" \
      "$open_files (ulimit -n): raise it, or run at most --running $((open_files - 2000))" >&2
    exit 2
  fi
  while (( 2 * (running + worker_processes - 1) / worker_processes + 1000 > open_files )); do
    worker_processes=$((worker_processes + 1))
  done
fi
if (( worker_processes > 1 )) && ! iptables -t nat -S OUTPUT >/dev/null 2>&1; then
  echo "[operator-bench] --running $running needs the idle workers spread over $worker_processes processes (ulimit -n is" \
    "$open_files), which needs iptables on the loopback (root); run at most --running $(((open_files - 1000) / 2))" >&2
  exit 2
fi
worker_nat() { # add|delete: the rules that send 127.(1+p).0.0/16:8080 to port 8080+p, p >= 1
  local op=$1 p
  for ((p = 1; p < worker_processes; p++)); do
    iptables -t nat "$op" OUTPUT -o lo -d "127.$((p + 1)).0.0/16" -p tcp --dport 8080 \
      -m comment --comment oncestream-operator-bench -j DNAT --to-destination ":$((8080 + p))" 2>/dev/null || [ "$op" = -D ]
  done
}

export ONCESTREAM_LOCAL_DIR=$repo/target/operator-bench/services
export ONCESTREAM_NETNS=oncestream-opbench ONCESTREAM_IP=198.18.16.2 ONCESTREAM_GATEWAY_IP=198.18.16.1
export ONCESTREAM_POD_CIDR=198.18.17.0/24 ONCESTREAM_SERVICE_CIDR=198.18.18.0/24 ONCESTREAM_EXTRA_CIDR=198.18.19.0/24
# The controller-manager's defaults (20 requests/s) would take most of an hour to create
# 10,000 StatefulSets' pods and volume claims.
export KUBE_CONTROLLER_MANAGER_ARGS="--kube-api-qps=200 --kube-api-burst=400 --concurrent-statefulset-syncs=10"
# No scheduler: with no node it schedules nothing, and it retried the thousands of unschedulable
# pods for as long as it ran (up to a core of the two, through every phase measured, the cold
# start included), which a cluster with nodes does not do. The pods stay Pending without it.
export KUBE_SCHEDULER=false

mkdir -p target
echo "[operator-bench] building the operator and the benchmark"
mvn -B -q -Dstyle.color=never package -DskipTests dependency:build-classpath -Dmdep.outputFile=target/bench-classpath.txt \
  -Dmdep.includeScope=test > target/operator-bench-build.log 2>&1 || { cat target/operator-bench-build.log; exit 1; }

done_() {
  worker_nat -D
  if $keep; then
    echo "[operator-bench] control plane left running: ONCESTREAM_* settings in $0; stop with kube.sh stop"
  else
    deploy/local/kube.sh clean >/dev/null 2>&1 || true
    deploy/local/netns.sh stop >/dev/null 2>&1 || true
  fi
}
deploy/local/kube.sh clean >/dev/null 2>&1 || true
trap done_ EXIT
worker_nat -D # left by an interrupted run
worker_nat -A
deploy/local/kube.sh start
eval "$(deploy/local/kube.sh env)"
export KUBECONFIG KUBE_AUDIT_LOG KUBE_BIN
# The idle workers are one JDK HTTP server for all K addresses, which by default closes a kept-alive
# connection when 200 others are idle; a real worker has its own server and the operator's one
# connection, so the benchmark lifts that limit (otherwise the operator reconnects all the time,
# and connects time out).
java -Xmx2g -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" \
  -Dsun.net.httpserver.maxIdleConnections=1000000 \
  -Djava.util.logging.config.file=/dev/null -Doncestream.repo.dir="$repo" \
  io.oncestream.bench.operator.OperatorBenchmark --jobs "$jobs" --worker-processes "$worker_processes" ${args[@]+"${args[@]}"}
