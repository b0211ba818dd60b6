package io.oncestream.bench.spark;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.from_json;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQuery;
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
 */
public final class SparkOrders {

    public static void main(String[] args) throws Exception {
        if (args.length != 13) {
            System.err.println("usage: SparkOrders <bootstrap> <topic> <cassandra host> <port> <datacenter> <keyspace> <table>"
                    + " <checkpoint dir> <records per batch, 0 for all> <task threads> <writes in flight per task>"
                    + " <partition|replica_set> <rows per batch with replica_set>");
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
        Dataset<Row> rows = reader.load()
                .select(from_json(col("value").cast("string"), order).as("o"))
                .where(col("o.status").equalTo("PAID").and(col("o.amount").gt(100.0)))
                .select(col("o.customer").as("customer"), col("o.id").as("order_id"), col("o.amount").as("amount"),
                        col("o.seq").as("seq"));
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
}
