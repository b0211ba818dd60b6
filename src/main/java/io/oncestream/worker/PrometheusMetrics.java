package io.oncestream.worker;

import java.util.Map;

import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;
import io.oncestream.engine.Histogram;
import io.oncestream.engine.ProgressTracker;

/**
 * {@link Progress} in the Prometheus text format, every series labelled with the job
 * ({@code job_id="namespace/name"}) and the worker's index; docs/metrics.md lists them. Counts
 * are the checkpoint's since the job started (a restarted worker goes on from them); the lag is
 * of the partitions this worker owns (each partition is exported by one worker only, so sums
 * over workers are the job's).
 */
final class PrometheusMetrics {

    private PrometheusMetrics() {
    }

    static String render(Progress p, ProgressTracker.Timings timings) {
        String labels = "job_id=\"" + escape(p.jobId()) + "\",worker=\"" + p.workerIndex() + "\"";
        StringBuilder out = new StringBuilder();
        gauge(out, "oncestream_batch_id", "Last committed batch id (-1 before the first).", labels, p.batchId());
        gauge(out, "oncestream_epoch", "The epoch the worker runs in (one more after each rescale).", labels, p.epoch());
        counter(out, "oncestream_records_read_total", "Records read from Kafka by committed batches, since the job started.",
                labels, p.totals().read());
        counter(out, "oncestream_records_filtered_total", "Records the filter dropped, since the job started.", labels,
                p.totals().filteredOut());
        counter(out, "oncestream_rows_written_total", "Rows written to Cassandra by committed batches, since the job started.",
                labels, p.totals().written());
        counter(out, "oncestream_records_dead_lettered_total", "Records written to the dead-letter table, since the job started.",
                labels, p.totals().deadLettered());
        counter(out, "oncestream_records_lost_total", "Records skipped because Kafka no longer had them (since the worker started).",
                labels, p.totals().lostRecords());
        counter(out, "oncestream_batches_total", "Batches committed (since the worker started).", labels, p.totals().batches());
        counter(out, "oncestream_batches_replayed_total", "Batches that replayed an open batch after a restart (since the worker"
                + " started).", labels, timings.replays());
        histogram(out, "oncestream_batch_duration_seconds", "Time from planning a batch to committing it.", labels,
                timings.batchSeconds());
        histogram(out, "oncestream_batch_write_duration_seconds", "Time a batch's writes took in Cassandra, first row sent to"
                + " last acknowledged (retries during an outage included).", labels, timings.writeSeconds());
        gauge(out, "oncestream_sink_available", "1 unless Cassandra writes are failing and being retried.", labels,
                p.sinkAvailable() ? 1 : 0);
        gauge(out, "oncestream_source_available", "1 unless Kafka cannot be reached.", labels, p.sourceAvailable() ? 1 : 0);
        out.append("# HELP oncestream_state Current engine state (1 for the current one).\n# TYPE oncestream_state gauge\n");
        for (EngineState s : EngineState.values()) {
            out.append("oncestream_state{").append(labels).append(",state=\"").append(s).append("\"} ")
                    .append(s == p.engineState() ? 1 : 0).append('\n');
        }
        out.append("# HELP oncestream_partition_lag_records Records in Kafka not committed yet, per partition the worker owns."
                + "\n# TYPE oncestream_partition_lag_records gauge\n");
        StringBuilder seconds = new StringBuilder("# HELP oncestream_partition_lag_seconds Age of the oldest record not committed"
                + " yet, per partition the worker owns (0 when none is behind; no series until that record's time is read)."
                + "\n# TYPE oncestream_partition_lag_seconds gauge\n");
        for (Map.Entry<String, Progress.PartitionProgress> e : p.partitions().entrySet()) {
            Progress.PartitionLag lag = p.lag() == null ? null : p.lag().partitions().get(e.getKey());
            long records = lag != null ? lag.records() : Math.max(0, e.getValue().latest() - e.getValue().committed());
            String series = "{" + labels + ",partition=\"" + escape(e.getKey()) + "\"} ";
            out.append("oncestream_partition_lag_records").append(series).append(records).append('\n');
            if (lag != null && (lag.records() == 0 || lag.oldestRecordMs() != null)) { // no series while its age is unknown
                seconds.append("oncestream_partition_lag_seconds").append(series).append(lag.ageMs() / 1000.0).append('\n');
            }
        }
        out.append(seconds);
        return out.toString();
    }

    private static void gauge(StringBuilder out, String name, String help, String labels, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append("\n# TYPE ").append(name).append(" gauge\n")
                .append(name).append('{').append(labels).append("} ").append(value).append('\n');
    }

    private static void counter(StringBuilder out, String name, String help, String labels, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append("\n# TYPE ").append(name).append(" counter\n")
                .append(name).append('{').append(labels).append("} ").append(value).append('\n');
    }

    private static void histogram(StringBuilder out, String name, String help, String labels, Histogram.Snapshot h) {
        out.append("# HELP ").append(name).append(' ').append(help).append("\n# TYPE ").append(name).append(" histogram\n");
        for (int i = 0; i < h.bounds().length; i++) {
            out.append(name).append("_bucket{").append(labels).append(",le=\"").append(h.bounds()[i]).append("\"} ")
                    .append(h.cumulative()[i]).append('\n');
        }
        out.append(name).append("_bucket{").append(labels).append(",le=\"+Inf\"} ").append(h.count()).append('\n');
        out.append(name).append("_sum{").append(labels).append("} ").append(h.sum()).append('\n');
        out.append(name).append("_count{").append(labels).append("} ").append(h.count()).append('\n');
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
