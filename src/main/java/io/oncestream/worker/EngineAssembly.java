package io.oncestream.worker;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.logging.Level;
import java.util.logging.Logger;

import com.datastax.oss.driver.api.core.CqlSession;

import io.oncestream.contract.CheckpointSeal;
import io.oncestream.contract.EngineState;
import io.oncestream.engine.Controls;
import io.oncestream.engine.MicroBatchEngine;
import io.oncestream.engine.Pipeline;
import io.oncestream.engine.ProgressTracker;
import io.oncestream.engine.ProtocolHooks;
import io.oncestream.engine.RowSink;
import io.oncestream.engine.cassandra.CassandraSessions;
import io.oncestream.engine.cassandra.CassandraSink;
import io.oncestream.engine.Epoch;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointEpochs;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.checkpoint.CheckpointMetadata;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.kafka.KafkaRecordSource;
import io.oncestream.engine.kafka.PartitionAssignment;
import io.oncestream.engine.transform.RecordTransformer;

/**
 * One worker's engine put together from its configuration: the checkpoint of its index, a Kafka
 * source over the partitions it owns, the Cassandra sink and the compiled expressions. The
 * worker process runs this assembly ({@link #connect}), and so does the benchmark, so that it
 * measures what runs. Closing it closes what it opened.
 */
public final class EngineAssembly implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(EngineAssembly.class.getName());

    /**
     * What may differ from production: file durability (only the benchmark turns fsync off to
     * measure its cost), protocol hooks (crash tests pause there), a wrapper around the sink
     * (the benchmark records latencies), the job's identity (a worker in a pod has it), and the
     * entries per segment of the checkpoint's logs (a test makes every entry start a segment).
     */
    public record Options(DurableFiles files, ProtocolHooks hooks, UnaryOperator<RowSink> sinkWrapper, Duration lockWait,
            String jobInstance, int segmentEntries) {

        /** How long a worker waits for its checkpoint's lock by default before it exits to be restarted. */
        public static final Duration DEFAULT_LOCK_WAIT = Duration.ofMinutes(10);

        public static Options production() {
            return new Options(DurableFiles.synced(), ProtocolHooks.NONE, UnaryOperator.identity(), DEFAULT_LOCK_WAIT, null,
                    Checkpoint.SEGMENT_ENTRIES);
        }

        public Options withFiles(DurableFiles files) {
            return new Options(files, hooks, sinkWrapper, lockWait, jobInstance, segmentEntries);
        }

        public Options withHooks(ProtocolHooks hooks) {
            return new Options(files, hooks, sinkWrapper, lockWait, jobInstance, segmentEntries);
        }

        public Options withSinkWrapper(UnaryOperator<RowSink> sinkWrapper) {
            return new Options(files, hooks, sinkWrapper, lockWait, jobInstance, segmentEntries);
        }

        public Options withLockWait(Duration lockWait) {
            return new Options(files, hooks, sinkWrapper, lockWait, jobInstance, segmentEntries);
        }

        /** The job's identity (its uid): group commits carry it, and a lost checkpoint goes on from this job's only. */
        public Options withJobInstance(String jobInstance) {
            return new Options(files, hooks, sinkWrapper, lockWait, jobInstance, segmentEntries);
        }

        /** Entries per segment of the checkpoint's logs ({@link Checkpoint#SEGMENT_ENTRIES} by default). */
        public Options withSegmentEntries(int segmentEntries) {
            return new Options(files, hooks, sinkWrapper, lockWait, jobInstance, segmentEntries);
        }
    }

    /** Which worker of which job the engine is: the job's configuration and the worker's index in it. */
    public record Worker(JobConfig config, int index) {

        /** What this worker's checkpoint must have been made for. */
        CheckpointMetadata checkpointMetadata() {
            return new CheckpointMetadata(CheckpointMetadata.FORMAT, config.jobId(), config.source().topics(),
                    config.parallelism(), index);
        }
    }

    /**
     * How the worker process steers and watches the engine: the progress it serves, whether to
     * stop at the next safe point, and the epoch a barrier was asked for (0 while none was).
     */
    public record Steering(ProgressTracker progress, BooleanSupplier stopRequested, IntSupplier barrier) {
    }

    /** The user and password the sink connects with; a null user for no authentication. */
    public record CassandraLogin(String username, String password) {

        @Override
        public String toString() {
            return "CassandraLogin[username=" + username + ", password=" + (password == null ? null : "(hidden)") + "]";
        }
    }

    /**
     * What the assembly holds before it builds the engine, and closes: the checkpoint, opened and
     * locked, and the CQL session, closed only when {@code ownsSession}.
     */
    private record Held(Checkpoint checkpoint, CqlSession session, boolean ownsSession) {

        CqlSession ownSession() {
            return ownsSession ? session : null;
        }
    }

    private final Checkpoint checkpoint;
    private final CqlSession ownSession;
    private final KafkaRecordSource source;
    private final CassandraSink sink;
    private final MicroBatchEngine engine;

    /**
     * The engine of a job's first epoch on {@code session}, which stays the caller's (the
     * benchmark shares one).
     */
    public EngineAssembly(Worker worker, Path checkpointDir, CqlSession session, Steering steering, Options options) {
        this(worker, null, new Held(Checkpoint.open(checkpointDir, worker.checkpointMetadata(), null, options.files(),
                options.segmentEntries()), session, false),
                () -> RecordTransformer.compile(worker.config()), steering, options);
    }

    /** @param savepoint what the worker's epoch starts from, or null for the job's first epoch */
    private EngineAssembly(Worker worker, Savepoint savepoint, Held held, Supplier<RecordTransformer> compiled,
            Steering steering, Options options) {
        JobConfig config = worker.config();
        Checkpoint checkpoint = held.checkpoint();
        BooleanSupplier stopRequested = steering.stopRequested();
        KafkaRecordSource openedSource = null;
        CassandraSink openedSink = null;
        // Everything that can fail is inside: a worker that starts again after a transient failure
        // must find the checkpoint's lock, the session and the consumer released.
        try {
            RecordTransformer transformer = compiled.get();
            PartitionAssignment assignment = new PartitionAssignment(config.source().topics(), config.parallelism(), worker.index());
            // The job and the table it writes: a checkpoint started over for another table (its volumes
            // deleted to accept the change) must not go on from the group's points of the old one.
            String instance = options.jobInstance() == null ? null
                    : options.jobInstance() + "/" + config.sink().keyspace() + "." + config.sink().table();
            openedSource = new KafkaRecordSource(config.source(), assignment, stopRequested, instance);
            openedSink = CassandraSink.open(held.session(), config, stopRequested);
            // Worker 0 of an epoch carries on the job's counts of the epochs before it.
            Epoch epoch = new Epoch(savepoint == null ? 0 : savepoint.epoch(),
                    savepoint == null ? null : assignment.seed(savepoint), steering.barrier(),
                    savepoint == null || worker.index() != 0 ? null : savepoint.totals());
            this.engine = new MicroBatchEngine(config, checkpoint,
                    new Pipeline(openedSource, transformer, options.sinkWrapper().apply(openedSink)),
                    new Controls(options.hooks(), steering.progress(), stopRequested, System::currentTimeMillis), epoch);
        } catch (RuntimeException e) {
            closeQuietly(openedSink, e);
            closeQuietly(openedSource, e);
            closeQuietly(held.ownSession(), e);
            closeQuietly(checkpoint, e);
            throw e;
        }
        this.sink = openedSink;
        this.checkpoint = checkpoint;
        this.ownSession = held.ownSession();
        this.source = openedSource;
    }

    /**
     * How a worker starts: it opens its checkpoint and reports what was committed before it
     * connects to anything, then connects to Cassandra, reporting {@code WAITING_FOR_SINK} with
     * the error for as long as no node answers. The session is the assembly's.
     *
     * The checkpoint is the one of the savepoint's epoch on the volume (epoch 0 without one); a
     * checkpoint already sealed at a barrier is reported and nothing connects.
     *
     * @param savepoint the savepoint the worker's epoch starts from, or null for the job's first epoch
     * @param cassandra the sink's credentials, from the worker's environment
     * @throws io.oncestream.engine.StopRequestedException if asked to stop before Cassandra answered
     * @throws Sealed if the checkpoint is sealed
     */
    public static EngineAssembly connect(Worker worker, Path volume, Savepoint savepoint, CassandraLogin cassandra,
            Steering steering, Options options) {
        JobConfig config = worker.config();
        ProgressTracker progress = steering.progress();
        BooleanSupplier stopRequested = steering.stopRequested();
        progress.epoch(savepoint == null ? 0 : savepoint.epoch());
        Path checkpointDir = CheckpointEpochs.check(volume, savepoint == null ? 0 : savepoint.epoch());
        Checkpoint checkpoint = CheckpointLockWait.open(checkpointDir, worker.checkpointMetadata(), savepoint, options.files(),
                options.segmentEntries(), options.lockWait(), progress, stopRequested);
        java.util.Optional<CheckpointSeal> seal = checkpoint.seal();
        if (seal.isPresent()) {
            checkpoint.close();
            progress.sealed(seal.get());
            throw new Sealed(seal.get());
        }
        // The expressions compile on a thread of their own while the driver connects: setting up
        // CEL is a few hundred ms of CPU at start, and connecting is mostly waiting for Cassandra.
        CompletableFuture<RecordTransformer> compiling = CompletableFuture.supplyAsync(() -> RecordTransformer.compile(config), task -> {
            Thread thread = new Thread(task, "compile-expressions");
            thread.setDaemon(true);
            thread.start();
        });
        CqlSession session;
        try {
            MicroBatchEngine.reportRecovered(checkpoint, progress);
            session = CassandraSessions.connect(config.sink(), cassandra.username(), cassandra.password(), stopRequested, e -> {
                progress.sinkAvailable(false);
                progress.state(EngineState.WAITING_FOR_SINK);
                progress.error("Cassandra: " + e.getMessage());
                LOG.log(Level.WARNING, "Cassandra does not answer yet, retrying (the worker starts once it does; check"
                        + " sink.cassandra.contactPoints and the nodes): " + e.getMessage());
            });
            progress.sinkAvailable(true);
            progress.error(null);
            progress.state(EngineState.STARTING);
        } catch (RuntimeException e) {
            closeQuietly(checkpoint, e);
            throw e;
        }
        return new EngineAssembly(worker, savepoint, new Held(checkpoint, session, true), () -> joined(compiling), steering,
                options);
    }

    /** The checkpoint was sealed at a barrier: the worker only reports it until it is replaced. */
    public static final class Sealed extends RuntimeException {
        private final transient CheckpointSeal seal;

        Sealed(CheckpointSeal seal) {
            super("the checkpoint is sealed at the barrier for epoch " + seal.nextEpoch() + " after batch " + seal.batchId());
            this.seal = seal;
        }

        public CheckpointSeal seal() {
            return seal;
        }
    }

    /** The compiled expressions, or what compiling them threw (an invalid expression names its field). */
    private static RecordTransformer joined(CompletableFuture<RecordTransformer> compiling) {
        try {
            return compiling.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }

    /** Runs batches until the job completes, is stopped, or fails (then throws). */
    public MicroBatchEngine.Outcome run() {
        return engine.run();
    }

    @Override
    public void close() {
        RuntimeException first = null;
        for (AutoCloseable resource : new AutoCloseable[] {sink, source, ownSession, checkpoint}) {
            if (resource == null) {
                continue;
            }
            try {
                resource.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private static void closeQuietly(AutoCloseable resource, RuntimeException cause) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            cause.addSuppressed(e);
        }
    }
}
