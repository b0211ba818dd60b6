package io.oncestream.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import io.oncestream.engine.config.TestConfigs;
import io.oncestream.testing.CassandraNode;
import io.oncestream.testing.KafkaBroker;
import io.oncestream.testing.WorkerProcess;

/**
 * One engine job against the real Kafka broker and Cassandra node: its own topic, keyspace,
 * table, configuration file and checkpoint directory, and the order events produced to it.
 */
final class EngineFixture {

    final KafkaBroker kafka;
    final CassandraNode cassandra;
    final String topic;
    final String keyspace;
    final String table = "paid_orders";
    final OrderStream orders;
    final Path dir;
    final Path config;
    final Path checkpoint;
    private int workers;

    EngineFixture(KafkaBroker kafka, CassandraNode cassandra, Path dir, String name, int partitions, long seed,
            UnaryOperator<String> configEdit) {
        this(kafka, cassandra, dir, name, partitions, Map.of(), seed, configEdit);
    }

    /** With topic-level settings for the job's topic ({@code max.message.bytes}, say). */
    EngineFixture(KafkaBroker kafka, CassandraNode cassandra, Path dir, String name, int partitions,
            Map<String, String> topicConfigs, long seed, UnaryOperator<String> configEdit) {
        this.kafka = kafka;
        this.cassandra = cassandra;
        this.dir = dir;
        this.topic = kafka.createTopic(name, partitions, topicConfigs);
        this.keyspace = cassandra.createKeyspace(name.replace('-', '_'));
        cassandra.session().execute(OrderStream.createTable(keyspace, table));
        this.orders = new OrderStream(seed, 150);
        this.config = dir.resolve("job.json");
        this.checkpoint = dir.resolve("checkpoint");
        String json = TestConfigs.orders("it/" + name, kafka.bootstrapServers(), topic,
                cassandra.contactPoint().getHostString() + ":" + cassandra.contactPoint().getPort(),
                cassandra.datacenter(), keyspace, table);
        write(config, configEdit.apply(json));
    }

    /** Changes the job's configuration file, for the workers started after. */
    void editConfig(UnaryOperator<String> edit) {
        try {
            write(config, edit.apply(Files.readString(config)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts a worker on this job's checkpoint; its output goes to {@code worker-N.log} in the fixture's directory. */
    WorkerProcess startWorker(Map<String, String> env) {
        return startWorker(env, List.of());
    }

    /** {@link #startWorker(Map)} with more command-line options. */
    WorkerProcess startWorker(Map<String, String> env, List<String> options) {
        return WorkerProcess.start(config, checkpoint, 0, env, dir.resolve("worker-" + (workers++) + ".log"), options);
    }

    /** Starts the worker from the packaged application, as the container image runs it. */
    WorkerProcess startPackagedWorker(Path runnerJar) {
        return WorkerProcess.startPackaged(runnerJar, config, checkpoint, Map.of(), dir.resolve("worker-" + (workers++) + ".log"));
    }

    Map<String, String> rows() {
        return OrderStream.actualRows(cassandra.session(), keyspace, table);
    }

    List<String> deadLetters() {
        return OrderStream.actualDeadLetters(cassandra.session(), keyspace, table + "_dead_letters");
    }

    /** Batch ids present in {@code log} ({@code offsets} or {@code commits}) of the checkpoint. */
    List<Long> batchIds(String log) {
        return new CheckpointOnDisk(checkpoint).batchIds(log);
    }

    /** Batch {@code batchId}'s write-ahead entry, as the checkpoint holds it. */
    io.oncestream.engine.checkpoint.BatchOffsets offsets(long batchId) {
        return new CheckpointOnDisk(checkpoint).offsets(batchId);
    }

    /** Batch {@code batchId}'s commit, as the checkpoint holds it. */
    io.oncestream.engine.checkpoint.BatchCommit commit(long batchId) {
        return new CheckpointOnDisk(checkpoint).commit(batchId);
    }

    private static void write(Path file, String text) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
