package io.oncestream.bench.engine;

import static io.oncestream.bench.engine.Figures.log;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;

import com.datastax.oss.driver.api.core.CqlSession;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import io.oncestream.engine.ProgressTracker;
import io.oncestream.engine.RowSink;
import io.oncestream.engine.cassandra.CassandraSessions;
import io.oncestream.engine.checkpoint.DurableFiles;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.worker.EngineAssembly;

/**
 * What every mode of the engine benchmark that runs against Kafka and Cassandra shares: the
 * services' addresses and one Cassandra session, the benchmark's keyspace, job configuration,
 * tables and topics, its records produced to Kafka, and the engine run in this JVM over a whole
 * topic.
 */
final class BenchSetup implements AutoCloseable {

    final String bootstrap;
    final String contactPoint;
    final String datacenter;
    /** How many records each topic gets ({@code --records}). */
    final int records;
    /** Where checkpoints, job files and process logs go: a new temporary directory. */
    final Path work;
    final CqlSession session;
    final String keyspace = "oncestream_bench";
    private String previousTable;

    BenchSetup(String bootstrap, String contactPoint, String datacenter, int records, Path work) {
        this.bootstrap = bootstrap;
        this.contactPoint = contactPoint;
        this.datacenter = datacenter;
        this.records = records;
        this.work = work;
        this.session = CassandraSessions.open(JobConfigs.parse(config("t", "x", 1000, false)).sink(), null, null);
    }

    @Override
    public void close() {
        session.close();
    }

    /** The benchmark job's configuration, as a worker reads it, over {@code topic} into {@code table}. */
    String config(String topic, String table, int maxRecords, boolean availableNow) {
        return """
                {"jobId": "bench/%s", "source": {"bootstrapServers": "%s", "topics": ["%s"], "maxRecordsPerBatch": %d},
                 "filter": "%s",
                 "sink": {"contactPoints": ["%s"], "localDatacenter": "%s", "keyspace": "%s", "table": "%s", "consistency": "ONE",
                          "columns": %s},
                 "trigger": {"intervalMs": 1000, "availableNow": %s}}
                """.formatted(table, bootstrap, topic, maxRecords, BenchOrders.FILTER, contactPoint, datacenter, keyspace, table,
                BenchOrders.COLUMNS, availableNow);
    }

    /**
     * A fresh table for a run. The previous run's table is dropped first and the node given a
     * few seconds, so that neither side of a ratio is timed while Cassandra flushes and compacts
     * what the run before it wrote (the measured rows were counted: nothing reads them later).
     */
    void createTable(String table) throws InterruptedException {
        if (previousTable != null) {
            session.execute("DROP TABLE IF EXISTS " + keyspace + "." + previousTable);
        }
        previousTable = table;
        // Not a synchronization: a fixed pause between runs, part of how every ratio has been measured.
        Thread.sleep(3000);
        session.execute("CREATE TABLE IF NOT EXISTS " + keyspace + "." + table
                + (table.startsWith("wide") ? " (order_id text PRIMARY KEY, customer text, amount double, seq bigint)"
                        : " (customer text, order_id text, amount double, seq bigint, PRIMARY KEY ((customer), order_id))"));
        session.execute("TRUNCATE " + keyspace + "." + table);
    }

    void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    /** The records produced to a topic: their values, and which of them (by sequence number) pass the filter. */
    record Produced(List<String> values, BitSet passingSeqs) {
        int passingRecords() {
            return passingSeqs.cardinality();
        }
    }

    /**
     * An empty benchmark keyspace, and {@code topic} with three partitions and the benchmark's
     * records, a fraction {@code passing} of which pass the filter (1: all).
     */
    Produced freshKeyspaceAndTopic(String topic, double passing) throws Exception {
        session.execute("DROP KEYSPACE IF EXISTS " + keyspace);
        session.execute("CREATE KEYSPACE " + keyspace + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        createTopic(topic, 3);
        log("producing %,d records to %s", records, topic);
        return produce(topic, records, passing);
    }

    private Produced produce(String topic, int count, double passing) {
        Random random = new Random(1);
        List<String> values = new ArrayList<>(count);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(20))) {
            for (int i = 0; i < count; i++) {
                String v = BenchOrders.json(random, i, passing >= 1 || random.nextDouble() < passing);
                values.add(v);
                producer.send(new ProducerRecord<>(topic, BenchOrders.parse(v)[1], v));
            }
            producer.flush();
        }
        BitSet passingSeqs = new BitSet(count);
        for (int i = 0; i < count; i++) {
            passingSeqs.set(i, BenchOrders.passes(values.get(i)));
        }
        return new Produced(values, passingSeqs);
    }

    Properties producerProps(int lingerMs) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        // one request in flight: a freshly created topic can otherwise lose its first batch (KAFKA-15591)
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        return p;
    }

    /**
     * Reads a wide table back and checks it holds exactly the records that pass the filter:
     * one row per passing order id, each with its own record's sequence number (the primary key
     * makes order ids unique, so the count and this check leave no room for a missing or an extra row).
     */
    void checkWideTable(String table, Produced produced) {
        BitSet passingSeqs = produced.passingSeqs();
        long rows = 0;
        for (com.datastax.oss.driver.api.core.cql.Row row : session.execute(
                com.datastax.oss.driver.api.core.cql.SimpleStatement.newInstance("SELECT order_id, seq FROM " + keyspace + "." + table)
                        .setPageSize(5000).setTimeout(java.time.Duration.ofSeconds(30)))) {
            long seq = row.getLong("seq");
            if (!row.getString("order_id").equals("ord-" + seq) || !passingSeqs.get((int) seq)) {
                throw new IllegalStateException(table + ": row " + row.getString("order_id") + " holds seq " + seq
                        + (passingSeqs.get((int) seq) ? "" : ", a record that fails the filter"));
            }
            rows++;
        }
        if (rows != produced.passingRecords()) {
            throw new IllegalStateException(table + " holds " + rows + " rows, expected the " + produced.passingRecords()
                    + " passing records");
        }
    }

    // ---- the engine, in process, availableNow over the whole topic ----

    /** One run: rows/s from its first record to its last acknowledgement, CPU-s per million records, rows/s start to return. */
    record Run(double rowsPerSecond, double cpuPerMillion, double wholeRowsPerSecond) {
        @Override
        public String toString() {
            return String.format("%,.0f rows/s, %.1f CPU-s/M", rowsPerSecond, cpuPerMillion);
        }
    }

    /**
     * The engine over the whole topic ({@code availableNow}). Rows/s from the moment its first
     * record is mapped to the last acknowledgement, as the raw loader's; CPU and the whole-run
     * rate from {@code run()} to its return (everything is connected and prepared before, as for
     * the loader).
     */
    Run engineRun(String topic, String table, boolean fsync, int expectedRows) throws Exception {
        createTable(table);
        JobConfig config = JobConfigs.parse(config(topic, table, 50_000, true));
        SpanSink.Span span = new SpanSink.Span();
        try (Assembly engine = new Assembly(config, work.resolve(table), fsync, sink -> new SpanSink(sink, span))) {
            long cpu = cpuNanos();
            long start = System.nanoTime();
            engine.engine.run();
            long end = System.nanoTime();
            double cpuSeconds = (cpuNanos() - cpu) / 1e9;
            long written = engine.progress.snapshot().totals().written();
            log("  %s: last batch %s", table, engine.progress.snapshot().lastBatch().durationsMs());
            if (written != expectedRows && !table.equals("warmup")) {
                throw new IllegalStateException("engine wrote " + written + " rows, expected " + expectedRows);
            }
            return new Run(written / span.seconds(), cpuSeconds / written * 1e6, written / ((end - start) / 1e9));
        }
    }

    /** CPU time of this JVM, all threads (engine, Kafka consumer, driver, GC), in ns. */
    static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** The worker's engine assembly with a choice of fsync and a wrapper of its sink that measures, and its progress. */
    final class Assembly implements AutoCloseable {
        final ProgressTracker progress;
        final EngineAssembly engine;

        Assembly(JobConfig config, Path dir, boolean fsync, UnaryOperator<RowSink> measuring) {
            this(config, dir, fsync, measuring, new AtomicBoolean());
        }

        Assembly(JobConfig config, Path dir, boolean fsync, UnaryOperator<RowSink> measuring, AtomicBoolean stop) {
            progress = new ProgressTracker(config.jobId(), 0, 1);
            EngineAssembly.Options options = EngineAssembly.Options.production()
                    .withFiles(fsync ? DurableFiles.synced() : DurableFiles.unsyncedForBenchmark())
                    .withSinkWrapper(measuring);
            engine = new EngineAssembly(new EngineAssembly.Worker(config, 0), dir, session,
                    new EngineAssembly.Steering(progress, stop::get, () -> 0), options);
        }

        @Override
        public void close() {
            engine.close();
        }
    }
}
