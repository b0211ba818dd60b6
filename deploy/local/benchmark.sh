#!/usr/bin/env bash
# Side-by-side engine benchmark against the real Kafka broker and Cassandra node (the test
# suite's instances, started here if they are not running). Prints ratios measured in one run:
# engine rows/s / raw java-driver rows/s on a grouped and a wide table (both timed from the
# first record to the last acknowledgement), CPU per record (wide), WAL fsync on / off, and
# end-to-end latency at a quarter and at half of the engine's wide rate.
#
# Usage: deploy/local/benchmark.sh [--pin] [--records 200000] [--rounds 2] [--latency-seconds 20]
#        deploy/local/benchmark.sh --decoding-only 200000   (filter+map on one thread: JSON decoded
#          only where the job's expressions read it / whole, and the filter answered from the decoded
#          fields / by CEL's interpreter; no services needed)
#        deploy/local/benchmark.sh --durable-writes 2000   (what one durable checkpoint entry costs on this disk:
#          a new file per entry as the engine writes offsets/N and commits/N, against appending to one file and
#          writing into preallocated space, each with fdatasync; 5 rounds alternating, no services needed; under
#          BENCH_JAVA_OPTS=-Djava.io.tmpdir=DIR on the file system of DIR)
#        deploy/local/benchmark.sh --latency-at 14000 [--latency-seconds 20] [--latency-interval-ms 0]   (latency
#          alone at that rate, after a warm-up run; prints where the time goes, the benchmark JVM's and the
#          Cassandra node's GC pauses, and the CPUs that Cassandra, Kafka and the benchmark JVM used meanwhile;
#          --latency-interval-ms sets the job's trigger.intervalMs, 0 by default: batches back to back;
#          --latency-warmup-seconds 5: how long records are produced before they are measured (the JIT
#          compilers took 0.43 of the 2 CPUs in the 20 s after a 5 s warm-up, 0.04-0.10 after 60 s);
#          --latency-consumer fetch.max.wait.ms=500: Kafka consumer properties of the job)
#        deploy/local/benchmark.sh --worker-process 3 [--records 200000] [--passing 0.3] [--worker-java-options "|-XX:A"]   (the packaged worker as a
#          whole process, availableNow, on the JDK of the images' runtime (images.sh jdk): its fixed costs at start and at exit and its CPU per record, median of 3 runs,
#          and that CPU by kind of thread (JIT compilers, main, driver, GC; from /proc on Linux);
#          with --worker-java-options, each run once per set of JVM options, sets separated by |;
#          with --baseline DIR, a copy of an earlier build's target/quarkus-app, that build too in every run,
#          with the first set of options: a code change side by side; with --aot-java JAVA_HOME, a JDK 25 or
#          later, the worker on it too, without and with an AOT cache (JEP 483/515) from a training run that
#          read no records and from one over the same topic. One run comes first, not measured)
#        deploy/local/benchmark.sh --worker-process 3 --records 1000000 --passing 0.3 --spark [--spark-batch 50000]
#          [--spark-grouping partition|replica_set]
#          (and in each run, on the same topic and Cassandra, the same job in Spark Structured Streaming
#          3.5 with the Spark Cassandra Connector, local[2], as a whole process: worker / Spark rows/s and
#          CPU per record, per run. deploy/local/spark is built first; Maven fetches Spark the first time.
#          --spark-grouping replica_set: the connector batches rows of partitions with the same replicas,
#          as the worker does, instead of its default, rows of one partition)
#        deploy/local/benchmark.sh --latency-side-by-side 3 [--records 200000] [--latency-seconds 20]
#          [--latency-warmup-seconds 60] [--spark-trigger-ms 0] [--spark-grouping partition|replica_set]
#          [--baseline DIR] [--no-spark]
#          (latency side by side, issue #31: the engine's maximum wide rate (the throughput mode's engine, the
#          best of 2 runs over --records), then at 25 % and at 50 % of it, 3 rounds each with the order rotated:
#          the packaged worker (a continuous job, the images' JDK and a worker pod's JVM options, WAL and commits
#          fsync'd), the floor (an at-least-once KafkaConsumer loop with the same settings, expressions and writes,
#          commitSync after the acks; same JDK and options) and Spark Structured Streaming 3.5 (deploy/local/spark,
#          local[2], foreachBatch with the connector, a processing-time trigger of --spark-trigger-ms), each a process
#          of its own on a new topic, a producer in the benchmark at the rate. Prints p50/p99/max of record latency
#          (Cassandra's ack of its batch - its Kafka timestamp) and CPU per record per run, then the per-round ratios
#          against the targets. --latency-warmup-seconds is 60 unless set (shorter only for a smoke run);
#          --latency-interval-ms and --latency-consumer apply to the worker's and the floor's job. About 35 min.
#          --baseline DIR, a copy of an earlier build's target/quarkus-app: its engine is a contender too ("before"),
#          and the ratios of the change are printed; --no-spark leaves Spark out, e.g. when measuring a change)
#        deploy/local/benchmark.sh --worker-memory 0,500,5000,max [--limits 512,384,320,256,192,160,128] [--seconds 60]
#          [--warmup-seconds 15] [--max-records 1500000] [--max-records-per-batch 50000] [--record-bytes N] [--nmt yes]
#          [--worker-java-options "|-XX:A"]   (the packaged
#          worker, a continuous job with a worker pod's JVM options and no -Xmx, in a memory cgroup whose limit
#          imitates a container's (needs a writable memory cgroup: run as root), at each load: records/s produced
#          while it runs (0: at rest; max: a backlog of --max-records drained as fast as it can). Limits are tried
#          from the largest down until one fails (OOM kill, GC pauses > 5 % of the window, or a table not exact);
#          prints RSS peak, heap after GC, GC %, OOM, table exact per run and the smallest limit per load;
#          each set of --worker-java-options (appended like spec.worker.jvmOptions) side by side at each limit;
#          --record-bytes N: each record's value padded to N bytes (the orders are about 190);
#          --nmt yes: the JVM's native memory by category at the end of each window)
#   --pin  give Cassandra the last CPU to itself and run Kafka and the benchmark JVM on the
#          others (taskset), for both the raw loader and the engine: the ratio then measures
#          the engine's own cost instead of its contention with a co-located node.
# BENCH_JAVA_OPTS adds JVM options to the benchmark JVM, e.g. a profile:
#   BENCH_JAVA_OPTS="-XX:StartFlightRecording=filename=/tmp/bench.jfr,settings=profile"
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
set -a
source deploy/local/test.env
set +a

if [[ " $* " == *" --spark "* && " $* " != *" --worker-process "* ]]; then
  echo "--spark goes with --worker-process N (it compares Spark with the packaged worker)" >&2; exit 2
fi
side_by_side=false
[[ " $* " == *" --latency-side-by-side "* ]] && side_by_side=true
started=()
services=(kafka cassandra)
[[ " $* " == *" --decoding-only "* ]] && services=() # CPU only: no Kafka, no Cassandra
[[ " $* " == *" --durable-writes "* ]] && services=() # the disk only
for s in ${services[@]+"${services[@]}"}; do
  if ! deploy/local/test-services.sh status "$s" >/dev/null 2>&1; then
    deploy/local/test-services.sh start "$s"
    started+=("$s")
  fi
done
trap '[ ${#started[@]} -eq 0 ] || deploy/local/test-services.sh stop "${started[@]}"' EXIT

pin=false
spark=false
no_spark=false
args=()
for a in "$@"; do
  case "$a" in
    --pin) pin=true ;;
    --spark) spark=true ;;
    --no-spark) no_spark=true ;;
    *) args+=("$a") ;;
  esac
done
$side_by_side && ! $no_spark && spark=true # Spark is one of its contenders, unless left out
launcher=()
if $pin; then
  command -v taskset >/dev/null 2>&1 || { echo "--pin needs taskset (util-linux)" >&2; exit 2; }
  cpus=$(nproc)
  [ "$cpus" -ge 2 ] || { echo "--pin needs at least 2 CPUs, this machine has $cpus" >&2; exit 2; }
  last=$((cpus - 1)); others="0-$((cpus - 2))"
  cassandra_pid=$(cat "$ONCESTREAM_LOCAL_DIR/cassandra/cassandra.pid")
  kafka_pid=$(cat "$ONCESTREAM_LOCAL_DIR/kafka/kafka.pid")
  taskset -a -p -c "$last" "$cassandra_pid" >/dev/null
  taskset -a -p -c "$others" "$kafka_pid" >/dev/null
  trap 'taskset -a -p -c 0-'"$last"' '"$cassandra_pid"' >/dev/null 2>&1 || true; taskset -a -p -c 0-'"$last"' '"$kafka_pid"' >/dev/null 2>&1 || true; [ ${#started[@]} -eq 0 ] || deploy/local/test-services.sh stop "${started[@]}"' EXIT
  launcher=(taskset -c "$others")
  echo "[bench] pinned: Cassandra on CPU $last, Kafka and the benchmark on CPU $others"
fi

echo "[bench] compiling"
goal=test-compile
[[ " $* " == *" --worker-process "* || " $* " == *" --worker-memory "* ]] && goal="package -DskipTests" # runs the packaged worker
$side_by_side && goal="package -DskipTests"
mvn -B -q -Dstyle.color=never $goal dependency:build-classpath -Dmdep.outputFile=target/bench-classpath.txt \
  -Dmdep.includeScope=test > target/bench-build.log 2>&1 || { cat target/bench-build.log; exit 1; }
if [[ " $* " == *" --worker-process "* || " $* " == *" --worker-memory "* ]] || $side_by_side; then
  # The worker runs on the JDK of the images' runtime, as in a worker pod.
  args+=(--worker-jdk "$(deploy/local/images.sh jdk)")
fi
if $spark; then
  echo "[bench] building the Spark comparison job (deploy/local/spark)"
  (cd deploy/local/spark && mvn -B -q -Dstyle.color=never package dependency:build-classpath \
    -Dmdep.outputFile=target/classpath.txt > "$repo/target/spark-build.log" 2>&1) || { cat target/spark-build.log; exit 1; }
  args+=(--spark-classpath "deploy/local/spark/target/classes:$(cat deploy/local/spark/target/classpath.txt)")
fi
# Where the test stack's services listen (its own address, see test.env), as the services say.
if [ ${#services[@]} -gt 0 ]; then
  eval "$(deploy/local/kafka.sh env; deploy/local/cassandra.sh env)"
fi
${launcher[@]+"${launcher[@]}"} java -Xmx2g ${BENCH_JAVA_OPTS:-} -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" \
  -Djava.util.logging.config.file=/dev/null io.oncestream.bench.engine.EngineBenchmark \
  --kafka "${KAFKA_BOOTSTRAP:-none}" --cassandra "${CASSANDRA_CONTACT_POINT:-none}" --datacenter "${CASSANDRA_DATACENTER:-none}" \
  --cassandra-gc-log "$ONCESTREAM_LOCAL_DIR/cassandra/logs/gc.log" \
  --service-pids "Cassandra=$(cat "$ONCESTREAM_LOCAL_DIR/cassandra/cassandra.pid" 2>/dev/null),Kafka=$(cat "$ONCESTREAM_LOCAL_DIR/kafka/kafka.pid" 2>/dev/null)" \
  ${args[@]+"${args[@]}"}
