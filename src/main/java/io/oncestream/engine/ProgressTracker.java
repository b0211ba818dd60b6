package io.oncestream.engine;

import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

import io.oncestream.contract.CheckpointSeal;
import io.oncestream.contract.EngineState;
import io.oncestream.contract.Progress;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.plan.KafkaOffsets;

/** Collects the engine's progress; {@link #snapshot()} is safe to call from the HTTP thread. */
public final class ProgressTracker {

    private final String jobId;
    private final int workerIndex;
    private final int parallelism;
    private EngineState state = EngineState.STARTING;
    private long batchId = -1;
    private Long runningBatchId;
    private final Map<String, Long> committed = new TreeMap<>();
    private final Map<String, Long> latest = new TreeMap<>();
    private Map<String, PartitionRange> running = Map.of();
    private long read;
    private long filteredOut;
    private long written;
    private long deadLettered;
    private long lostRecords;
    private long batches;
    private Progress.BatchFigures lastBatch;
    private boolean sinkAvailable = true;
    private boolean sourceAvailable = true;
    private String lastError;
    private int epoch;
    private CheckpointSeal seal;
    private Map<String, SourceLag> lag;
    /** The sum of the job's end offsets at the last probe: the count the incoming rate grows with. */
    private long endOffsets;
    private Instant lagObservedAt;
    private String lagError;
    private final RateWindow readRate = new RateWindow(RATE_WINDOW_MS);
    private final RateWindow writtenRate = new RateWindow(RATE_WINDOW_MS);
    private final RateWindow incomingRate = new RateWindow(RATE_WINDOW_MS);

    private final Histogram batchSeconds = new Histogram(Histogram.BATCH_SECONDS);
    private final Histogram writeSeconds = new Histogram(Histogram.BATCH_SECONDS);
    private long replays;

    /**
     * Durations for {@code /metrics}: each committed batch's, plan to commit, and its writes',
     * first row sent to last acknowledged; and how many batches were replays of an open batch.
     */
    public record Timings(Histogram.Snapshot batchSeconds, Histogram.Snapshot writeSeconds, long replays) {
    }

    /** The wall-clock window of the reported rates. */
    public static final long RATE_WINDOW_MS = 60_000;

    public ProgressTracker(String jobId, int workerIndex, int parallelism) {
        this.jobId = jobId;
        this.workerIndex = workerIndex;
        this.parallelism = parallelism;
        sampleRates();
    }

    public synchronized void state(EngineState newState) {
        this.state = newState;
    }

    public synchronized EngineState state() {
        return state;
    }

    /** Samples the counts the read and write rates are computed from. */
    private void sampleRates() {
        long now = System.currentTimeMillis();
        readRate.sample(now, read);
        writtenRate.sample(now, written);
    }

    /** The checkpoint's counts since the job started: the worker's totals go on from them. */
    synchronized void totals(io.oncestream.contract.RecordTotals recovered) {
        read = recovered.read();
        filteredOut = recovered.filteredOut();
        written = recovered.written();
        deadLettered = recovered.deadLettered();
        sampleRates();
    }

    synchronized void recovered(long lastCommitted, Map<String, PartitionRange> committedRanges) {
        this.batchId = lastCommitted;
        committedRanges.forEach((p, r) -> committed.put(p, r.end()));
    }

    synchronized void planned(Map<String, KafkaOffsets> kafka) {
        kafka.forEach((p, o) -> latest.put(p, o.latest()));
        sourceAvailable = true;
    }

    synchronized void running(long id, Map<String, PartitionRange> ranges) {
        runningBatchId = id;
        running = Map.copyOf(ranges);
    }

    synchronized void committed(Progress.BatchFigures figures, Map<String, PartitionRange> ranges, long lost) {
        batchId = figures.batchId();
        runningBatchId = null;
        running = Map.of();
        ranges.forEach((p, r) -> committed.put(p, r.end()));
        read += figures.read();
        filteredOut += figures.filteredOut();
        written += figures.written();
        deadLettered += figures.deadLettered();
        lostRecords += lost;
        batches++;
        lastBatch = figures;
        if (figures.replayed()) {
            replays++;
        }
        Long total = figures.durationsMs() == null ? null : figures.durationsMs().get("total");
        Long writing = figures.durationsMs() == null ? null : figures.durationsMs().get("writing");
        if (total != null) {
            batchSeconds.observe(total / 1000.0);
        }
        if (writing != null) {
            writeSeconds.observe(writing / 1000.0);
        }
        sampleRates();
    }

    public synchronized void sinkAvailable(boolean available) {
        sinkAvailable = available;
    }

    public synchronized void sourceAvailable(boolean available) {
        sourceAvailable = available;
    }

    /** The epoch this worker runs in. */
    public synchronized void epoch(int number) {
        epoch = number;
    }

    /** The checkpoint is sealed at a barrier: reported until the worker is replaced. */
    public synchronized void sealed(CheckpointSeal sealed) {
        seal = sealed;
        state = EngineState.AT_BARRIER;
        runningBatchId = null;
        running = Map.of();
        if (sealed.batchId() >= 0) {
            batchId = Math.max(batchId, sealed.batchId());
            sealed.partitions().forEach((p, point) -> committed.put(p, point.offset()));
        }
    }

    /**
     * The next offset to apply of each partition this worker owns, as far as it knows it: the
     * committed end, else the start of the batch it runs; for the lag probe.
     */
    public synchronized Map<String, Long> ownCommitted() {
        Map<String, Long> out = new TreeMap<>(committed);
        running.forEach((p, r) -> out.putIfAbsent(p, r.start()));
        return out;
    }

    /** What the lag probe saw at {@code at}: every partition of the job with a known committed offset. */
    public synchronized void lag(Map<String, SourceLag> partitions, Instant at) {
        lag = Map.copyOf(partitions);
        lagObservedAt = at;
        lagError = null;
        partitions.forEach((p, l) -> {
            if (l.exact()) {
                latest.merge(p, l.latest(), Math::max);
            }
        });
        endOffsets = partitions.values().stream().mapToLong(SourceLag::latest).sum();
        incomingRate.sample(at.toEpochMilli(), endOffsets);
    }

    /** The lag probe could not reach Kafka: the source is reported unavailable until it can again. */
    public synchronized void lagFailed(String message) {
        lagError = message;
    }

    public synchronized void error(String message) {
        lastError = message;
    }

    /** Clears {@code lastError} if it still is {@code message}: a failure that passed is not reported as current. */
    public synchronized void errorPassed(String message) {
        if (message != null && message.equals(lastError)) {
            lastError = null;
        }
    }

    public synchronized Timings timings() {
        return new Timings(batchSeconds.snapshot(), writeSeconds.snapshot(), replays);
    }

    public synchronized Progress snapshot() {
        Map<String, Progress.PartitionProgress> partitions = new TreeMap<>();
        java.util.Set<String> keys = new java.util.TreeSet<>(latest.keySet());
        keys.addAll(committed.keySet());
        for (String p : keys) {
            PartitionRange r = running.get(p);
            partitions.put(p, new Progress.PartitionProgress(committed.getOrDefault(p, 0L), latest.getOrDefault(p, 0L),
                    r == null ? null : r.start(), r == null ? null : r.end()));
        }
        Instant now = Instant.now();
        long nowMs = now.toEpochMilli();
        Progress.LagReport lagReport = null;
        if (lag != null) {
            Map<String, Progress.PartitionLag> byPartition = new TreeMap<>();
            // An age not known yet goes out as 0 with oldestRecordMs null and records behind, as the
            // document always had it; the operator reads that as unknown (WorkerProgress).
            lag.forEach((p, l) -> {
                Long age = l.ageMs(nowMs);
                byPartition.put(p, new Progress.PartitionLag(l.committed(), l.latest(), l.records(), l.oldestRecordMs(),
                        age == null ? 0 : age, l.exact()));
            });
            lagReport = new Progress.LagReport(lagObservedAt.toString(), byPartition);
        }
        Progress.Rates rates = new Progress.Rates((int) (RATE_WINDOW_MS / 1000), readRate.perSecond(nowMs, read),
                writtenRate.perSecond(nowMs, written), lag == null ? null : incomingRate.perSecond(nowMs, endOffsets));
        boolean source = sourceAvailable && lagError == null;
        String error = lagError != null && state != EngineState.FAILED ? lagError : lastError;
        return new Progress(jobId, workerIndex, parallelism, state.name(), batchId, runningBatchId, partitions,
                new Progress.Totals(read, filteredOut, written, deadLettered, lostRecords, batches), lastBatch,
                sinkAvailable, source, error, now.toString(), epoch, seal, lagReport, rates);
    }
}
