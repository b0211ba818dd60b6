package io.oncestream.bench.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.from_json;

import java.io.PrintStream;

import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.SourceProgress;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.StreamingQueryListener;
import org.apache.spark.sql.streaming.Trigger;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The benchmark's job in Spark Structured Streaming: every record of a Kafka topic, from the
 * earliest offset, decoded from JSON, filtered by {@code status = 'PAID' AND amount > 100.0},
 * mapped to (customer, order_id, amount, seq) and written to a Cassandra table by the Spark
 * Cassandra Connector, then the process ends ({@code Trigger.AvailableNow}, as the Oncestream
 * worker's {@code availableNow}). Local mode with as many task threads as the machine's
 * benchmark gives it.
 *
 * <p>Arguments: bootstrap servers, topic, Cassandra host, port, local datacenter, keyspace,
 * table, checkpoint directory, records per micro-batch (0: all that are there in one), task
 * threads, writes in flight per task, the connector's batch grouping ({@code partition}, its
 * default, or {@code replica_set}), rows per batch with {@code replica_set}.
 *
 * <p>With a fourteenth argument, a processing-time trigger interval in ms (0: each micro-batch as
 * soon as the previous one ends), the latency mode of {@code benchmark.sh --latency-side-by-side}:
 * the query runs until the process is stopped, and writes each micro-batch with the connector in
 * {@code foreachBatch}. The moment that write returns is when Cassandra acknowledged the batch's
 * last write; the job prints it per batch ({@value #ACK} {@code <batch id> <ms>}), and a query
 * listener prints each batch's Kafka offsets ({@value #PROGRESS} {@code <batch id> <input rows>
 * <start offsets> <end offsets>}, tab-separated, offsets as Spark's JSON). The benchmark joins
 * the two and computes every record's latency (ack − Kafka timestamp) the way it does for the
 * other contenders, so the job adds no per-record work of its own to Spark's batches.
 */
public final class SparkOrders {

    /** How the latency mode's lines start. */
    static final String ACK = "latency-ack";
    static final String PROGRESS = "latency-progress";
    static final String STARTED = "latency-started";

    /** The latency mode's lines go to standard output (Spark logs to standard error), each flushed. */
    private static final PrintStream OUT = System.out;

    public static void main(String[] args) throws Exception {
        if (args.length != 13 && args.length != 14) {
            System.err.println("usage: SparkOrders <bootstrap> <topic> <cassandra host> <port> <datacenter> <keyspace> <table>"
                    + " <checkpoint dir> <records per batch, 0 for all> <task threads> <writes in flight per task>"
                    + " <partition|replica_set> <rows per batch with replica_set> [<processing-time trigger ms: latency mode>]");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        String checkpoint = args[7];
        long perBatch = Long.parseLong(args[8]);
        var builder = SparkSession.builder();
        if (args[11].equals("replica_set")) {
            builder = builder.config("spark.cassandra.output.batch.grouping.key", "replica_set")
                    .config("spark.cassandra.output.batch.size.rows", args[12]);
        }
        SparkSession spark = builder
                .appName("oncestream-comparison")
                .master("local[" + Integer.parseInt(args[9]) + "]")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", args[9])
                .config("spark.local.dir", checkpoint + "-local")
                .config("spark.cassandra.connection.host", args[2])
                .config("spark.cassandra.connection.port", args[3])
                .config("spark.cassandra.connection.localDC", args[4])
                .config("spark.cassandra.output.consistency.level", "ONE")
                .config("spark.cassandra.output.concurrent.writes", args[10])
                .getOrCreate();
        System.out.println("spark version " + spark.version());
        StructType order = new StructType()
                .add("id", DataTypes.StringType)
                .add("status", DataTypes.StringType)
                .add("amount", DataTypes.DoubleType)
                .add("customer", DataTypes.StringType)
                .add("seq", DataTypes.LongType);
        var reader = spark.readStream()
                .format("kafka")
                .option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", topic)
                .option("startingOffsets", "earliest");
        if (perBatch > 0) {
            reader = reader.option("maxOffsetsPerTrigger", perBatch);
        }
        if (args.length == 14) {
            // The worker's consumer waits at most 10 ms for a fetch (Kafka's default is 500 ms): Spark's the same.
            reader = reader.option("kafka.fetch.max.wait.ms", "10");
        }
        Dataset<Row> rows = reader.load()
                .select(from_json(col("value").cast("string"), order).as("o"))
                .where(col("o.status").equalTo("PAID").and(col("o.amount").gt(100.0)))
                .select(col("o.customer").as("customer"), col("o.id").as("order_id"), col("o.amount").as("amount"),
                        col("o.seq").as("seq"));
        if (args.length == 14) {
            latency(spark, rows, args[5], args[6], checkpoint, Long.parseLong(args[13]));
            return;
        }
        StreamingQuery query = rows.writeStream()
                .format("org.apache.spark.sql.cassandra")
                .option("keyspace", args[5])
                .option("table", args[6])
                .option("checkpointLocation", checkpoint)
                .trigger(Trigger.AvailableNow())
                .start();
        query.awaitTermination();
        System.out.println("spark: " + query.recentProgress().length + " micro-batches, last: " + query.lastProgress());
        spark.stop();
    }

    /**
     * The latency mode: a processing-time trigger of {@code triggerMs}, each micro-batch written
     * by the connector in {@code foreachBatch} and its acknowledgement time printed, until the
     * process is stopped.
     */
    private static void latency(SparkSession spark, Dataset<Row> rows, String keyspace, String table, String checkpoint,
            long triggerMs) throws Exception {
        spark.streams().addListener(new StreamingQueryListener() {
            @Override
            public void onQueryStarted(StreamingQueryListener.QueryStartedEvent event) {
            }

            @Override
            public void onQueryProgress(StreamingQueryListener.QueryProgressEvent event) {
                SourceProgress source = event.progress().sources()[0];
                print(PROGRESS + "\t" + event.progress().batchId() + "\t" + source.numInputRows() + "\t" + source.startOffset()
                        + "\t" + source.endOffset());
            }

            @Override
            public void onQueryTerminated(StreamingQueryListener.QueryTerminatedEvent event) {
            }
        });
        // Runs on the driver, after the batch's rows are written: the write's return is the ack of its last write.
        VoidFunction2<Dataset<Row>, Long> write = (batch, batchId) -> {
            batch.write()
                    .format("org.apache.spark.sql.cassandra")
                    .option("keyspace", keyspace)
                    .option("table", table)
                    .mode(SaveMode.Append)
                    .save();
            print(ACK + "\t" + batchId + "\t" + System.currentTimeMillis());
        };
        StreamingQuery query = rows.writeStream()
                .option("checkpointLocation", checkpoint)
                .trigger(Trigger.ProcessingTime(triggerMs))
                .foreachBatch(write)
                .start();
        print(STARTED + "\t" + spark.version());
        query.awaitTermination();
    }

    private static synchronized void print(String line) {
        OUT.println(line);
        OUT.flush();
    }
}
