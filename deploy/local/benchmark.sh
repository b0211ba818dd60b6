#!/usr/bin/env bash
# Side-by-side engine benchmark against the real Kafka broker and Cassandra node (the test
# suite's instances, started here if they are not running). Prints ratios measured in one run:
# engine rows/s / raw java-driver rows/s, WAL fsync on / off, and end-to-end latency.
#
# Usage: deploy/local/benchmark.sh [--records 200000] [--rounds 2] [--latency-seconds 20]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
set -a
source deploy/local/test.env
set +a

started=()
for s in kafka cassandra; do
  if ! deploy/local/test-services.sh status "$s" >/dev/null 2>&1; then
    deploy/local/test-services.sh start "$s"
    started+=("$s")
  fi
done
trap '[ ${#started[@]} -eq 0 ] || deploy/local/test-services.sh stop "${started[@]}"' EXIT

echo "[bench] compiling"
mvn -B -q -Dstyle.color=never test-compile dependency:build-classpath -Dmdep.outputFile=target/bench-classpath.txt \
  -Dmdep.includeScope=test > target/bench-build.log 2>&1 || { cat target/bench-build.log; exit 1; }
java -Xmx2g -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" \
  -Djava.util.logging.config.file=/dev/null io.oncestream.bench.EngineBenchmark \
  --kafka "127.0.0.1:$KAFKA_PORT" --cassandra "127.0.0.1:$CASSANDRA_PORT" "$@"
