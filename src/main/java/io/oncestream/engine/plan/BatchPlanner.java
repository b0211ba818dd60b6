package io.oncestream.engine.plan;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import io.oncestream.contract.StartingOffsets;
import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchLog;
import io.oncestream.engine.checkpoint.BatchOffsets;
import io.oncestream.engine.checkpoint.PartitionRange;

/**
 * Decides the next batch from the newest entries of the two logs and what Kafka holds.
 * A pure function; the recovery rule is this table (O = newest offsets entry, C = newest commit):
 *
 * <table>
 * <tr><th>O</th><th>C</th><th>plan</th></tr>
 * <tr><td>none</td><td>none</td><td>batch 0 from {@code startingOffsets}, or from the {@link Seed} of a savepoint</td></tr>
 * <tr><td>N</td><td>N</td><td>batch N+1 from the ends of N</td></tr>
 * <tr><td>N</td><td>N-1 (none if N = 0)</td><td>replay N with exactly its ranges</td></tr>
 * <tr><td>N</td><td>below N-1, or above N</td><td>error: the logs do not belong together</td></tr>
 * <tr><td>none</td><td>any</td><td>error: commits without offsets</td></tr>
 * </table>
 *
 * For a new batch each partition starts at the previous end; a partition not in the previous
 * batch (new, or the job's first batch) starts at earliest (or latest, for a first batch with
 * {@code startingOffsets: latest}). A start below Kafka's earliest offset means records aged out:
 * an error, or with {@code failOnDataLoss: false} a skip that is counted. A start beyond the
 * latest offset, or a partition that vanished, is always an error. The batch is capped at
 * {@code maxRecords}, shared among partitions in proportion to their backlog.
 */
public final class BatchPlanner {

    private BatchPlanner() {
    }

    /** Inputs of one planning step. */
    public record Input(
            Optional<BatchLog.Entry<BatchOffsets>> lastOffsets,
            Optional<BatchLog.Entry<BatchCommit>> lastCommit,
            Map<String, KafkaOffsets> kafka,
            StartingOffsets startingOffsets,
            long maxRecords,
            boolean failOnDataLoss,
            long nowMs,
            Seed seed) {

        /** Without a seed: a checkpoint of the job's first epoch. */
        public Input(Optional<BatchLog.Entry<BatchOffsets>> lastOffsets, Optional<BatchLog.Entry<BatchCommit>> lastCommit,
                Map<String, KafkaOffsets> kafka, StartingOffsets startingOffsets, long maxRecords, boolean failOnDataLoss,
                long nowMs) {
            this(lastOffsets, lastCommit, kafka, startingOffsets, maxRecords, failOnDataLoss, nowMs, null);
        }
    }

    public static Plan plan(Input in) {
        Recovery recovery = recover(in.lastOffsets(), in.lastCommit());
        if (recovery instanceof Recovery.Replay replay) {
            return new Plan.Replay(replay.batchId(), replay.offsets());
        }
        if (recovery instanceof Recovery.NextBatch after) {
            Map<String, Long> ends = new TreeMap<>();
            after.previous().partitions().forEach((p, r) -> ends.put(p, r.end()));
            return next(after.batchId(), ends, after.previousCommit().lastTimestamps(), p -> false, in);
        }
        if (in.seed() != null) {
            Map<String, Long> ends = new TreeMap<>();
            Map<String, Long> bases = new TreeMap<>();
            in.seed().partitions().forEach((p, point) -> {
                ends.put(p, point.offset());
                bases.put(p, point.lastTimestamp());
            });
            return next(0, ends, bases, in.seed().startsFromStartingOffsets(), in);
        }
        return next(0, Map.of(), Map.of(), p -> true, in);
    }

    /**
     * The rows of the table above: what the newest entries of the two logs decide before Kafka
     * is asked. {@link #plan} acts on it; {@code checkpoint inspect} reports it.
     *
     * @throws PlanningException when the logs do not belong together
     */
    public static Recovery recover(Optional<BatchLog.Entry<BatchOffsets>> lastOffsets,
            Optional<BatchLog.Entry<BatchCommit>> lastCommit) {
        if (lastOffsets.isEmpty()) {
            if (lastCommit.isPresent()) {
                throw new PlanningException("the commit log has batch " + lastCommit.get().batchId()
                        + " but the offset log is empty: the checkpoint is damaged");
            }
            return new Recovery.FirstBatch();
        }
        BatchLog.Entry<BatchOffsets> offsets = lastOffsets.get();
        long n = offsets.batchId();
        long c = lastCommit.map(BatchLog.Entry::batchId).orElse(-1L);
        if (c == n) {
            return new Recovery.NextBatch(n + 1, offsets.value(), lastCommit.get().value());
        }
        if (c == n - 1) {
            return new Recovery.Replay(n, offsets.value());
        }
        throw new PlanningException("the offset log ends at batch " + n + " but the commit log at batch " + c
                + ": the logs do not belong together");
    }

    /**
     * @param previous ends of the partitions the checkpoint (or its seed) knows
     * @param first    for a partition it does not know: whether it starts by {@code startingOffsets} (else earliest)
     */
    private static Plan next(long batchId, Map<String, Long> previous, Map<String, Long> lastTimestamps,
            java.util.function.Predicate<String> first, Input in) {
        for (String partition : previous.keySet()) {
            if (!in.kafka().containsKey(partition)) {
                throw new PlanningException("partition " + partition + " is in the checkpoint but no longer in Kafka"
                        + " (was its topic deleted?)");
            }
        }
        Map<String, Long> starts = new TreeMap<>();
        long lost = 0;
        for (Map.Entry<String, KafkaOffsets> e : new TreeMap<>(in.kafka()).entrySet()) {
            String partition = e.getKey();
            KafkaOffsets kafka = e.getValue();
            Long before = previous.get(partition);
            long start;
            if (before != null) {
                start = before;
            } else if (in.startingOffsets() == StartingOffsets.LATEST && first.test(partition)) {
                start = kafka.latest();
            } else {
                start = kafka.earliest();
            }
            if (start > kafka.latest()) {
                throw new PlanningException("partition " + partition + ": the checkpoint is at offset " + start
                        + " but Kafka ends at " + kafka.latest() + " (was the topic re-created or truncated?)");
            }
            if (start < kafka.earliest()) {
                if (in.failOnDataLoss()) {
                    throw new PlanningException("partition " + partition + ": offsets " + start + " to "
                            + (kafka.earliest() - 1) + " are no longer in Kafka (earliest is " + kafka.earliest()
                            + "); set failOnDataLoss: false to skip them");
                }
                lost += kafka.earliest() - start;
                start = kafka.earliest();
            }
            starts.put(partition, start);
        }
        Map<String, Long> ends = cap(starts, in.kafka(), in.maxRecords());
        long total = 0;
        Map<String, PartitionRange> ranges = new TreeMap<>();
        for (Map.Entry<String, Long> e : starts.entrySet()) {
            long end = ends.get(e.getKey());
            total += end - e.getValue();
            ranges.put(e.getKey(), new PartitionRange(e.getValue(), end, lastTimestamps.getOrDefault(e.getKey(), 0L)));
        }
        if (total == 0 && lost == 0) {
            return new Plan.Idle(batchId);
        }
        return new Plan.Next(batchId, new BatchOffsets(ranges, lost, in.nowMs()));
    }

    /** Ends per partition so that the batch holds at most {@code max} records, shared by backlog. */
    static Map<String, Long> cap(Map<String, Long> starts, Map<String, KafkaOffsets> kafka, long max) {
        long backlog = 0;
        for (Map.Entry<String, Long> e : starts.entrySet()) {
            backlog += kafka.get(e.getKey()).latest() - e.getValue();
        }
        Map<String, Long> ends = new TreeMap<>();
        if (backlog <= max) {
            starts.forEach((p, s) -> ends.put(p, kafka.get(p).latest()));
            return ends;
        }
        long given = 0;
        List<String> withMore = new ArrayList<>();
        for (Map.Entry<String, Long> e : starts.entrySet()) {
            long available = kafka.get(e.getKey()).latest() - e.getValue();
            long share = (long) Math.floor((double) max * available / backlog);
            ends.put(e.getKey(), e.getValue() + share);
            given += share;
            if (share < available) {
                withMore.add(e.getKey());
            }
        }
        // Rounding down left fewer than withMore.size() records: one more each, in partition order.
        for (String p : withMore) {
            if (given == max) {
                break;
            }
            ends.put(p, ends.get(p) + 1);
            given++;
        }
        return ends;
    }
}
