package io.oncestream.worker;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.stream.Collectors;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.oncestream.contract.CheckpointSeal;
import io.oncestream.engine.checkpoint.BatchCommit;
import io.oncestream.engine.checkpoint.BatchOffsets;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointContents;
import io.oncestream.engine.checkpoint.CheckpointEpochs;
import io.oncestream.engine.checkpoint.CheckpointException;
import io.oncestream.engine.checkpoint.PartitionRange;
import io.oncestream.engine.checkpoint.RecoveredChain;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.plan.BatchPlanner;
import io.oncestream.engine.plan.PlanningException;
import io.oncestream.engine.plan.Recovery;

/**
 * {@code checkpoint inspect [--json] [--epoch N] DIR}: what a worker's checkpoint holds and what recovery will
 * do with it (on a volume of a rescaled job, the checkpoint of its newest epoch unless
 * {@code --epoch} names another, with the epochs there are, the savepoint it was seeded from
 * and its seal), read without the worker's lock and without changing a byte, so it is safe on a
 * running worker ({@code kubectl exec <pod> -- java -Xmx32m -jar /deployments/quarkus-run.jar checkpoint
 * inspect /checkpoint}) and on a copy. "Next" is the planner's own decision
 * ({@link BatchPlanner#recover}). Exit codes: 0 readable and recoverable; 1 a file that does not
 * decode (named) or logs recovery refuses; 2 a bad command line.
 */
public final class CheckpointCommand {

    static final String USAGE = "usage: checkpoint inspect [--json] [--epoch N] DIRECTORY";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private CheckpointCommand() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        List<String> rest = new ArrayList<>(List.of(args));
        boolean json = rest.remove("--json");
        Integer epoch = null;
        int at = rest.indexOf("--epoch");
        if (at >= 0) {
            if (at + 1 >= rest.size() || !rest.get(at + 1).matches("[0-9]{1,9}")) {
                err.println(USAGE);
                return 2;
            }
            epoch = Integer.parseInt(rest.remove(at + 1));
            rest.remove(at);
        }
        if (rest.size() != 2 || !rest.get(0).equals("inspect") || rest.get(1).startsWith("-")) {
            err.println(USAGE);
            return 2;
        }
        Path volume = Path.of(rest.get(1));
        Path dir = volume;
        Report report;
        try {
            SortedSet<Integer> epochs = CheckpointEpochs.present(volume);
            int chosen = epoch != null ? epoch : epochs.isEmpty() ? 0 : epochs.last();
            dir = CheckpointEpochs.directory(volume, chosen);
            report = Report.of(CheckpointContents.read(dir), chosen, List.copyOf(epochs));
        } catch (CheckpointException e) {
            if (json) {
                out.println(toJson(Map.of("directory", dir.toString(), "error",
                        Map.of("path", e.path().toString(), "message", e.getMessage()))));
            } else {
                err.println("checkpoint inspect: " + e.getMessage());
            }
            return 1;
        }
        out.println(json ? toJson(report) : report.text());
        return report.next().action().equals("refuse") ? 1 : 0;
    }

    /** What {@code --json} prints. */
    record Report(String directory, Metadata metadata, List<Batch> batches, Long openBatch, Next next, List<String> tempFiles,
            List<String> incompleteEntries, int epoch, List<Integer> epochs, Savepoint savepoint, CheckpointSeal sealed, RecoveredChain recovered) {

        record Metadata(int format, String jobId, List<String> topics, int workerIndex, int parallelism) {
        }

        record Batch(long batchId, boolean committed, Map<String, PartitionRange> partitions, long records, long lostRecords,
                String plannedAt, BatchCommit commit) {
        }

        /** {@code action}: first, next, replay or refuse. */
        record Next(String action, Long batchId, String description) {
        }

        static Report of(CheckpointContents c, int epoch, List<Integer> epochs) {
            // A commit a power loss took back, which the next write-ahead entry carries, counts as the worker will restore it.
            Map<Long, BatchCommit> commits = new java.util.TreeMap<>(c.commits());
            c.restoredCommit().ifPresent(r -> commits.put(r.batchId(), r.value()));
            List<Batch> batches = new ArrayList<>();
            c.offsets().forEach((id, offsets) -> batches.add(new Batch(id, commits.containsKey(id), offsets.partitions(),
                    offsets.size(), offsets.lostRecords(), Instant.ofEpochMilli(offsets.plannedAtMs()).toString(),
                    commits.get(id))));
            Long open = c.offsets().isEmpty() || commits.containsKey(c.offsets().lastKey()) ? null : c.offsets().lastKey();
            var m = c.metadata();
            Savepoint savepoint = Checkpoint.readSavepoint(c.directory()).orElse(null);
            CheckpointSeal sealed = Checkpoint.readSeal(c.directory()).orElse(null);
            RecoveredChain recovered = Checkpoint.readRecovered(c.directory()).orElse(null);
            return new Report(c.directory().toString(), new Metadata(m.format(), m.jobId(), m.topics(), m.workerIndex(),
                    m.parallelism()), batches, open, next(c, sealed, savepoint, recovered), c.tempFiles().stream()
                    .map(p -> c.directory().relativize(p).toString()).toList(), c.incompleteEntries().stream()
                    .map(t -> c.directory().relativize(t.file()) + " at byte " + t.position() + " (" + t.bytes() + " bytes)").toList(),
                    epoch, epochs, savepoint, sealed, recovered);
        }

        private static Next next(CheckpointContents c, CheckpointSeal sealed, Savepoint savepoint, RecoveredChain recovered) {
            if (sealed != null) {
                return new Next("sealed", null, "nothing: sealed at the barrier for epoch " + sealed.nextEpoch() + " after batch "
                        + sealed.batchId() + "; its partitions went on from there in epoch " + sealed.nextEpoch());
            }
            if (c.offsets().isEmpty() && (savepoint != null || recovered != null)) {
                return new Next("first", 0L, "batch 0, each partition from " + (recovered != null
                        ? "the chain points recovered from the consumer group (a lost volume)" : "the savepoint of epoch "
                        + savepoint.epoch()) + "; no batch was planned yet");
            }
            Recovery recovery;
            try {
                recovery = BatchPlanner.recover(c.latestOffsets(), c.latestCommit());
            } catch (PlanningException e) {
                return new Next("refuse", null, "a worker refuses to start on this checkpoint: " + e.getMessage());
            }
            if (recovery instanceof Recovery.Replay replay) {
                String restored = c.restoredCommit().map(r -> ", after restoring commits/" + r.batchId() + " from offsets/"
                        + replay.batchId() + " (a power loss took it back before it was durable)").orElse("");
                return new Next("replay", replay.batchId(), "replay batch " + replay.batchId() + " with exactly the ranges of offsets/"
                        + replay.batchId() + " (" + ranges(replay.offsets()) + ")" + restored + ", then continue");
            }
            if (recovery instanceof Recovery.NextBatch after) {
                String starts = after.previous().partitions().entrySet().stream()
                        .map(e -> e.getKey() + " at " + e.getValue().end()).collect(Collectors.joining(", "));
                return new Next("next", after.batchId(), "batch " + after.batchId() + ", each partition from the end of batch "
                        + (after.batchId() - 1) + " (" + starts + "); its ends, and partitions new to the job, come from Kafka");
            }
            return new Next("first", 0L, "batch 0, from the job's startingOffsets: no batch was planned yet");
        }

        String text() {
            StringBuilder s = new StringBuilder();
            s.append("checkpoint ").append(directory).append(": job ").append(metadata.jobId()).append(", topics ")
                    .append(metadata.topics()).append(", worker ").append(metadata.workerIndex()).append(" of ")
                    .append(metadata.parallelism()).append(" (format ").append(metadata.format()).append(")\n");
            if (epochs.size() > 1 || epoch > 0) {
                s.append("epoch ").append(epoch).append(" (epochs on this volume: ").append(epochs)
                        .append("; --epoch N for another)\n");
            }
            if (savepoint != null) {
                s.append("seeded from the savepoint of epoch ").append(savepoint.epoch()).append(" (").append(savepoint.fromParallelism())
                        .append(" -> ").append(savepoint.toParallelism()).append(" workers, after batches ")
                        .append(savepoint.lastBatches()).append(")\n");
            }
            if (recovered != null) {
                s.append("recovered from the consumer group (a lost volume): ").append(recovered.partitions()).append("\n");
            }
            if (batches.isEmpty()) {
                s.append("no batch in the offset log\n");
            } else {
                long committed = batches.stream().filter(Batch::committed).count();
                s.append("batches ").append(batches.get(0).batchId()).append("..").append(batches.get(batches.size() - 1).batchId())
                        .append(" retained: ").append(committed).append(" committed, ").append(openBatch == null ? "none" : "1")
                        .append(" open\n");
                for (Batch b : batches) {
                    s.append(String.format("  batch %d  %-9s  %,d records  %s%n", b.batchId(), b.committed() ? "committed" : "OPEN",
                            b.records(), ranges(b.partitions())));
                    if (b.commit() != null) {
                        BatchCommit k = b.commit();
                        s.append(String.format("      read %,d, filtered out %,d, written %,d, dead-lettered %,d in %,d ms%n",
                                k.recordsRead(), k.recordsFiltered(), k.rowsWritten(), k.deadLettered(), k.durationMs()));
                    }
                    if (b.lostRecords() > 0) {
                        s.append(String.format("      %,d records had aged out of Kafka and were skipped (failOnDataLoss: false)%n",
                                b.lostRecords()));
                    }
                }
            }
            if (!tempFiles.isEmpty()) {
                s.append("temp files left by a crash (a worker removes them when it starts): ").append(tempFiles).append('\n');
            }
            if (!incompleteEntries.isEmpty()) {
                s.append("incomplete last entries left by a crash (read as absent; a worker cuts each off when it next appends to"
                        + " that log): ").append(incompleteEntries).append('\n');
            }
            s.append("next: ").append(next.description());
            return s.toString();
        }
    }

    private static String ranges(BatchOffsets offsets) {
        return ranges(offsets.partitions());
    }

    private static String ranges(Map<String, PartitionRange> partitions) {
        Map<String, String> out = new LinkedHashMap<>();
        partitions.forEach((p, r) -> out.put(p, "[" + r.start() + ", " + r.end() + ")"));
        return out.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
    }

    private static String toJson(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
