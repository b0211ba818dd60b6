package io.oncestream.operator.status;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.oncestream.contract.TopicPartitionKey;


/**
 * The job's lag from its workers' reports: per partition, the owner's own figure when the owner
 * reports (its committed offset is its checkpoint's), else the freshest figure another worker
 * read from the job's consumer group (so the partitions of a worker that is gone keep their lag,
 * and it grows). Workers of a build without the lag probe count as before: the latest offset of
 * their last plan minus their committed offset, with no age. With no worker reporting one, the
 * operator's own reading counts (from the group, like another worker's). A worker that cannot
 * reach Kafka (its source unavailable) reports the figures its probe read last, frozen: they are
 * then no better than a reading from the group, and a fresher one wins, another worker's or, when
 * no worker reaches Kafka, the operator's; an older one does not.
 *
 * <p>An age not known (records behind whose oldest one's time the probe has not read yet, as in a
 * worker's first seconds, or a worker that has not probed yet) is never taken for 0: the job's
 * age is then unknown too, rather than a figure that says it caught up.
 */
final class JobLag {

    /** One partition's lag as chosen; {@code ageMs} null when not known. */
    record Figure(long committed, long records, Long ageMs, boolean exact, Instant observedAt) {
    }

    private final Map<String, Figure> chosen = new TreeMap<>();

    /**
     * @param operatorLag what the operator read itself (no worker reports a lag, or none reaches
     *        Kafka), or null
     */
    JobLag(List<WorkerProgress> reports, WorkerProgress.LagReport operatorLag) {
        // A worker that cannot reach Kafka reports what its probe read last, frozen: its own
        // figures then count as no better than anyone's, and the freshest reading wins.
        List<WorkerProgress.LagReport> lags = new java.util.ArrayList<>();
        List<Boolean> reaching = new java.util.ArrayList<>();
        reports.forEach(p -> {
            lags.add(p.lag());
            reaching.add(p.sourceAvailable());
        });
        lags.add(operatorLag);
        reaching.add(Boolean.FALSE); // the operator's figures come from the group: never exact
        for (int i = 0; i < lags.size(); i++) {
            WorkerProgress.LagReport lag = lags.get(i);
            boolean trusted = reaching.get(i);
            if (lag == null || lag.partitions() == null) {
                continue;
            }
            Instant at = Instant.parse(lag.observedAt());
            lag.partitions().forEach((key, l) -> {
                Figure candidate = new Figure(l.committed(), l.records(), l.ageMs(), l.exact() && trusted, at);
                Figure before = chosen.get(key);
                if (before == null || (candidate.exact() && !before.exact())
                        || (candidate.exact() == before.exact() && candidate.observedAt().isAfter(before.observedAt()))) {
                    chosen.put(key, candidate);
                }
            });
        }
        for (WorkerProgress p : reports) {
            if (p.partitions() == null) {
                continue;
            }
            p.partitions().forEach((key, part) -> chosen.putIfAbsent(key,
                    new Figure(part.committed(), Math.max(0, part.latest() - part.committed()),
                            part.latest() > part.committed() ? null : 0L, true, null)));
        }
    }

    boolean isEmpty() {
        return chosen.isEmpty();
    }

    long records() {
        return chosen.values().stream().mapToLong(Figure::records).sum();
    }

    /**
     * Age of the oldest record not committed, in whole seconds; null when a partition behind has
     * no known age (the oldest could be that one's).
     */
    Long seconds() {
        long oldest = 0;
        for (Figure f : chosen.values()) {
            if (f.ageMs() == null) {
                return null;
            }
            oldest = Math.max(oldest, f.ageMs());
        }
        return oldest / 1000;
    }

    /** topic → partition → records behind. */
    Map<String, Map<String, Long>> byPartition() {
        Map<String, Map<String, Long>> out = new TreeMap<>();
        chosen.forEach((key, f) -> {
            TopicPartitionKey tp = TopicPartitionKey.parse(key);
            out.computeIfAbsent(tp.topic(), t -> new TreeMap<>()).put(String.valueOf(tp.partition()), f.records());
        });
        return out;
    }

    /** Committed offsets of the partitions no reporting worker owns, as the job's consumer group has them. */
    Map<String, Long> fromGroup() {
        Map<String, Long> out = new TreeMap<>();
        chosen.forEach((key, f) -> {
            if (!f.exact()) {
                out.put(key, f.committed());
            }
        });
        return out;
    }
}
