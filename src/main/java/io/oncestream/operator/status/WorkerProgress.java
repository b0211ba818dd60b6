package io.oncestream.operator.status;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

import io.oncestream.contract.CheckpointSeal;
import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;

/**
 * What the operator keeps of a worker's answer: the part of the {@code /progress} document (the
 * contract's {@link Progress}, which {@link #parse} reads) that the status is projected from.
 * Two answers that are equal project the same status, so a job is reconciled only when an answer
 * differs (ProgressWatch): what changes without changing the status is left out (the time of
 * the snapshot, the running batch's range, the phases' durations), the lag report does not
 * compare the time of its probe, and rates are kept to a tenth.
 */
public record WorkerProgress(
        String jobId,
        int workerIndex,
        String state,
        long batchId,
        Map<String, Partition> partitions,
        Totals totals,
        LastBatch lastBatch,
        boolean sinkAvailable,
        boolean sourceAvailable,
        String lastError,
        int epoch,
        CheckpointSeal barrier,
        LagReport lag,
        Rates rates) {

    /**
     * The reported state as this build knows it, or null for a state a newer worker added (it is
     * still shown as reported, and counts as neither failed nor working).
     */
    public EngineState engineState() {
        return EngineState.ofReported(state);
    }

    /** Whether the worker reports {@code expected}. */
    public boolean is(EngineState expected) {
        return engineState() == expected;
    }

    /** Offsets of one {@code topic-partition}. */
    public record Partition(long committed, long latest) {
    }

    /** Counts of the worker's checkpoint since the job started. */
    public record Totals(long read, long filteredOut, long written, long deadLettered) {
    }

    /** Processing speed of the last committed batch (records per second of its own duration). */
    public record LastBatch(double inputRecordsPerSecond, double writtenRowsPerSecond) {
    }

    /**
     * The job's lag as the worker's probe saw it (absent from workers older than the probe).
     * Two reports with the same figures are equal whenever they were read: an idle job's answers
     * stay the same from poll to poll, so it is not reconciled for nothing (ProgressWatch).
     */
    public record LagReport(String observedAt, Map<String, PartitionLag> partitions) {

        @Override
        public boolean equals(Object other) {
            return other instanceof LagReport r && java.util.Objects.equals(partitions, r.partitions);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hashCode(partitions);
        }
    }

    /**
     * One partition's lag; {@code exact} when the worker owns it (committed offset from its
     * checkpoint); {@code ageMs} null when records are behind but the probe has not read the
     * oldest one's time (a new worker's first probe, say).
     */
    public record PartitionLag(long committed, long latest, long records, Long ageMs, boolean exact) {
    }

    /**
     * Rates over the last {@code windowSeconds}; a rate is null until a second has passed. Kept
     * to a tenth (the status shows whole numbers), so that a rate that has not changed does not
     * make an answer differ.
     */
    public record Rates(int windowSeconds, Double inputRecordsPerSecond, Double writtenRowsPerSecond,
            Double incomingRecordsPerSecond) {

        public Rates {
            inputRecordsPerSecond = tenth(inputRecordsPerSecond);
            writtenRowsPerSecond = tenth(writtenRowsPerSecond);
            incomingRecordsPerSecond = tenth(incomingRecordsPerSecond);
        }

        private static Double tenth(Double v) {
            return v == null ? null : Math.round(v * 10) / 10.0;
        }
    }

    /** Reads the JSON a worker served; an {@link IllegalArgumentException} says what is wrong with it. */
    public static WorkerProgress parse(String json) {
        return of(Progress.parse(json));
    }

    /** What the status is projected from, of a worker's document. */
    public static WorkerProgress of(Progress p) {
        Progress.Totals t = p.totals();
        Progress.BatchFigures b = p.lastBatch();
        Progress.Rates r = p.rates();
        return new WorkerProgress(p.jobId(), p.workerIndex(), p.state(), p.batchId(),
                each(p.partitions(), x -> new Partition(x.committed(), x.latest())),
                t == null ? null : new Totals(t.read(), t.filteredOut(), t.written(), t.deadLettered()),
                b == null ? null : new LastBatch(b.inputRecordsPerSecond(), b.writtenRowsPerSecond()),
                p.sinkAvailable(), p.sourceAvailable(), p.lastError(), p.epoch(), p.barrier(),
                p.lag() == null ? null : new LagReport(p.lag().observedAt(), each(p.lag().partitions(),
                        x -> new PartitionLag(x.committed(), x.latest(), x.records(),
                                x.records() > 0 && x.oldestRecordMs() == null ? null : x.ageMs(), x.exact()))),
                r == null ? null : new Rates(r.windowSeconds(), r.inputRecordsPerSecond(), r.writtenRowsPerSecond(),
                        r.incomingRecordsPerSecond()));
    }

    /** Each value of {@code map} as {@code f} makes it, in the document's order; null stays null. */
    private static <A, B> Map<String, B> each(Map<String, A> map, Function<A, B> f) {
        if (map == null) {
            return null;
        }
        Map<String, B> out = new LinkedHashMap<>();
        map.forEach((k, v) -> out.put(k, v == null ? null : f.apply(v)));
        return out;
    }
}
