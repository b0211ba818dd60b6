package io.oncestream.worker;

import java.nio.file.Path;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

import com.datastax.oss.driver.api.core.CqlSession;

import io.oncestream.engine.MicroBatchEngine;
import io.oncestream.engine.ProgressTracker;
import io.oncestream.engine.ProtocolHooks;
import io.oncestream.engine.RowSink;
import io.oncestream.engine.cassandra.CassandraSink;
import io.oncestream.engine.checkpoint.Checkpoint;
import io.oncestream.engine.checkpoint.CheckpointMetadata;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.kafka.KafkaRecordSource;
import io.oncestream.engine.kafka.PartitionAssignment;
import io.oncestream.engine.transform.RecordTransformer;

/**
 * One worker's engine put together from its configuration: the checkpoint of its index, a Kafka
 * source over the partitions it owns, the Cassandra sink and the compiled expressions. The
 * worker process runs this assembly, and so does the benchmark, so that it measures what runs.
 * Closing it closes what it opened (not the Cassandra session, which belongs to the caller).
 */
public final class EngineAssembly implements AutoCloseable {

    /**
     * What may differ from production: file durability (only the benchmark turns fsync off to
     * measure its cost), protocol hooks (crash tests pause there) and a wrapper around the sink
     * (the benchmark records latencies).
     */
    public record Options(DurableFiles files, ProtocolHooks hooks, UnaryOperator<RowSink> sinkWrapper) {

        public static Options production() {
            return new Options(DurableFiles.synced(), ProtocolHooks.NONE, UnaryOperator.identity());
        }

        public Options withFiles(DurableFiles files) {
            return new Options(files, hooks, sinkWrapper);
        }

        public Options withHooks(ProtocolHooks hooks) {
            return new Options(files, hooks, sinkWrapper);
        }

        public Options withSinkWrapper(UnaryOperator<RowSink> sinkWrapper) {
            return new Options(files, hooks, sinkWrapper);
        }
    }

    private final Checkpoint checkpoint;
    private final KafkaRecordSource source;
    private final CassandraSink sink;
    private final MicroBatchEngine engine;

    public EngineAssembly(JobConfig config, int workerIndex, Path checkpointDir, CqlSession session, ProgressTracker progress,
            BooleanSupplier stopRequested, Options options) {
        RecordTransformer transformer = RecordTransformer.compile(config);
        PartitionAssignment assignment = new PartitionAssignment(config.source().topics(), config.parallelism(), workerIndex);
        CheckpointMetadata metadata = new CheckpointMetadata(CheckpointMetadata.FORMAT, config.jobId(),
                config.source().topics(), config.parallelism(), workerIndex);
        Checkpoint openedCheckpoint = Checkpoint.open(checkpointDir, metadata, options.files());
        KafkaRecordSource openedSource = null;
        try {
            openedSource = new KafkaRecordSource(config.source(), assignment, stopRequested);
            this.sink = CassandraSink.open(session, config, stopRequested);
        } catch (RuntimeException e) {
            closeQuietly(openedSource, e);
            closeQuietly(openedCheckpoint, e);
            throw e;
        }
        this.checkpoint = openedCheckpoint;
        this.source = openedSource;
        this.engine = new MicroBatchEngine(config, checkpoint, source, transformer, options.sinkWrapper().apply(sink),
                options.hooks(), progress, stopRequested, System::currentTimeMillis);
    }

    /** Runs batches until the job completes, is stopped, or fails (then throws). */
    public MicroBatchEngine.Outcome run() {
        return engine.run();
    }

    @Override
    public void close() {
        RuntimeException first = null;
        for (AutoCloseable resource : new AutoCloseable[] {sink, source, checkpoint}) {
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
