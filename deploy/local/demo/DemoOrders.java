import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The demo's sample data (deploy/local/demo.sh), run as a single-file program on the jars of
 * the packaged application:
 * <pre>
 *   schema  HOST:PORT DATACENTER             keyspace shop, table shop.paid_orders
 *   produce BOOTSTRAP TOPIC PARTITIONS RATE   JSON orders, RATE per second, until stopped
 *   sample  HOST:PORT DATACENTER ROWS         a few rows of shop.paid_orders and the row count
 * </pre>
 */
public final class DemoOrders {

    private static final String[] STATUSES = {"PAID", "PAID", "NEW", "CANCELLED"};
    private static final String[] CUSTOMERS = {"Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret"};

    public static void main(String[] args) throws Exception {
        switch (args.length == 0 ? "" : args[0]) {
            case "schema" -> schema(args[1], args[2]);
            case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            case "sample" -> sample(args[1], args[2], Integer.parseInt(args[3]));
            default -> {
                System.err.println("usage: DemoOrders schema|produce|sample ...");
                System.exit(2);
            }
        }
    }

    private static CqlSession session(String contactPoint, String datacenter) {
        int colon = contactPoint.lastIndexOf(':');
        return CqlSession.builder()
                .addContactPoint(new InetSocketAddress(contactPoint.substring(0, colon), Integer.parseInt(contactPoint.substring(colon + 1))))
                .withLocalDatacenter(datacenter).build();
    }

    static void schema(String contactPoint, String datacenter) {
        try (CqlSession session = session(contactPoint, datacenter)) {
            session.execute("CREATE KEYSPACE IF NOT EXISTS shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
            session.execute("CREATE TABLE IF NOT EXISTS shop.paid_orders (order_id text PRIMARY KEY, amount double, customer text)");
        }
    }

    static void produce(String bootstrap, String topic, int partitions, int perSecond) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        } catch (java.util.concurrent.ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
        props.put("enable.idempotence", "true");
        // one request in flight: a topic created a moment ago can otherwise lose its first batch (KAFKA-15591)
        props.put("max.in.flight.requests.per.connection", "1");
        props.put("linger.ms", "20");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            long sent = 0;
            long start = System.nanoTime();
            java.util.concurrent.atomic.AtomicReference<Exception> failed = new java.util.concurrent.atomic.AtomicReference<>();
            while (failed.get() == null) {
                String id = String.format("o-%08d", sent);
                String json = String.format(java.util.Locale.ROOT, "{\"id\":\"%s\",\"status\":\"%s\",\"amount\":%.2f,\"customer\":{\"name\":\"%s\"}}",
                        id, STATUSES[random.nextInt(STATUSES.length)], random.nextDouble(1, 500),
                        CUSTOMERS[random.nextInt(CUSTOMERS.length)]);
                producer.send(new ProducerRecord<>(topic, id, json), (metadata, error) -> {
                    if (error != null) {
                        failed.compareAndSet(null, error);
                    }
                });
                sent++;
                long due = start + sent * 1_000_000_000L / perSecond;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
            }
            throw new IllegalStateException("producing to " + topic + " failed after " + sent + " records", failed.get());
        }
    }

    static void sample(String contactPoint, String datacenter, int rows) {
        try (CqlSession session = session(contactPoint, datacenter)) {
            System.out.printf("%-12s %10s  %s%n", "order_id", "amount", "customer");
            for (Row row : session.execute("SELECT order_id, amount, customer FROM shop.paid_orders LIMIT " + rows)) {
                System.out.printf(java.util.Locale.ROOT, "%-12s %10.2f  %s%n", row.getString(0), row.getDouble(1), row.getString(2));
            }
            long count = session.execute("SELECT count(*) FROM shop.paid_orders").one().getLong(0);
            System.out.printf("(%d rows in shop.paid_orders)%n", count);
        }
    }
}
