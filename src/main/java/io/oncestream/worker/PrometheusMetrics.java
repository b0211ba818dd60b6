package io.oncestream.worker;

import java.util.Map;

import io.oncestream.engine.EngineState;
import io.oncestream.engine.Progress;

/** {@link Progress} in the Prometheus text format, labelled with the job and worker. */
final class PrometheusMetrics {

    private PrometheusMetrics() {
    }

    static String render(Progress p) {
        String labels = "job_id=\"" + escape(p.jobId()) + "\",worker=\"" + p.workerIndex() + "\"";
        StringBuilder out = new StringBuilder();
        gauge(out, "oncestream_batch_id", "Last committed batch id (-1 before the first).", labels, p.batchId());
        counter(out, "oncestream_records_read_total", "Records read from Kafka.", labels, p.totals().read());
        counter(out, "oncestream_records_filtered_total", "Records dropped by the filter.", labels, p.totals().filteredOut());
        counter(out, "oncestream_rows_written_total", "Rows written to Cassandra.", labels, p.totals().written());
        counter(out, "oncestream_records_dead_lettered_total", "Records written to the dead-letter table.", labels,
                p.totals().deadLettered());
        counter(out, "oncestream_records_lost_total", "Records skipped because Kafka no longer had them.", labels,
                p.totals().lostRecords());
        counter(out, "oncestream_batches_total", "Batches committed.", labels, p.totals().batches());
        gauge(out, "oncestream_sink_available", "1 unless Cassandra writes are failing and being retried.", labels,
                p.sinkAvailable() ? 1 : 0);
        gauge(out, "oncestream_source_available", "1 unless Kafka cannot be reached.", labels, p.sourceAvailable() ? 1 : 0);
        out.append("# HELP oncestream_state Current engine state (1 for the current one).\n# TYPE oncestream_state gauge\n");
        for (EngineState s : EngineState.values()) {
            out.append("oncestream_state{").append(labels).append(",state=\"").append(s).append("\"} ")
                    .append(s == p.state() ? 1 : 0).append('\n');
        }
        out.append("# HELP oncestream_partition_lag Latest offset minus committed offset.\n# TYPE oncestream_partition_lag gauge\n");
        for (Map.Entry<String, Progress.PartitionProgress> e : p.partitions().entrySet()) {
            out.append("oncestream_partition_lag{").append(labels).append(",partition=\"").append(escape(e.getKey()))
                    .append("\"} ").append(Math.max(0, e.getValue().latest() - e.getValue().committed())).append('\n');
        }
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

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
