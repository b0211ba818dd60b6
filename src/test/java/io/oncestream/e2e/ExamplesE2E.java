package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

import com.datastax.oss.driver.api.core.cql.Row;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.engine.OrderStream;
import io.oncestream.testing.Awaits;
import io.oncestream.testing.LocalService;

/**
 * The other examples of deploy/examples/, applied as they are: nested JSON mapped to columns
 * with bad records in a dead-letter table and credentials from Secrets, and an
 * {@code availableNow} backfill that ends Completed. Each table is compared with what the
 * produced records say, computed here.
 */
class ExamplesE2E extends E2ETest {

    @Test
    void theNestedJsonExampleAndTheBackfillExampleRunAsTheyAre() throws Exception {
        E2EJob orders = E2EJob.example(kube, kafka, cassandra, 3, 500);
        String ns = orders.namespace;
        cassandra.session().execute("CREATE TABLE shop.orders_archive (order_id text PRIMARY KEY, status text, amount double)");
        cassandra.session().execute("CREATE TABLE shop.deliveries (shipment_id text PRIMARY KEY, order_id text, city text, "
                + "country text, weight_kg double)");
        E2EJob.freshTopic(kafka, "shipments", 3);
        orders.produce(3000);
        List<Shipment> shipments = shipments(1500);
        kafka.produce(shipments.stream().map(s -> new ProducerRecord<>("shipments", s.id, s.json)).toList());

        kube.kubectl(null, "apply", "-n", ns, "-f", example("shipments-nested.yaml")).orThrow();
        kube.kubectl(null, "apply", "-n", ns, "-f", example("orders-backfill.yaml")).orThrow();

        // The backfill: every order the topic held, the last record of each id, then Completed.
        Awaits.until(E2ESettings.WAIT, "orders-backfill Completed", () -> phase(ns, "orders-backfill") == Phase.Completed);
        assertThat(archive()).as("shop.orders_archive").isEqualTo(expectedArchive(orders.orders.produced()));
        Awaits.until(E2ESettings.WAIT, "the backfill's workers scaled to zero", () -> kube.admin().pods().inNamespace(ns)
                .withLabel("oncestream.io/job", "orders-backfill").list().getItems().isEmpty());

        // Nested JSON: delivered shipments flattened, bad records dead-lettered, nothing else.
        Map<String, String> expected = expectedDeliveries(shipments);
        long bad = shipments.stream().filter(s -> s.bad).count();
        Awaits.until(E2ESettings.WAIT, "shop.deliveries to equal the expectation and every bad record dead-lettered",
                () -> deliveries().equals(expected) && deadLetters() == bad);
        assertThat(deliveries()).isEqualTo(expected);
        System.out.printf("[e2e] examples: %d orders archived, %d deliveries, %d dead letters of %d shipments%n",
                archive().size(), expected.size(), bad, shipments.size());

        // The Secrets reached the worker: the Kafka client settings and the Cassandra login.
        // (KafkaSecretsIT proves that a worker applies the mounted consumer properties.)
        Pod worker = kube.admin().pods().inNamespace(ns).withName("shipments-0").get();
        assertThat(worker.getSpec().getVolumes()).filteredOn(v -> v.getSecret() != null)
                .extracting(v -> v.getSecret().getSecretName()).containsExactly("shipments-kafka");
        List<EnvVar> env = worker.getSpec().getContainers().get(0).getEnv();
        assertThat(env).filteredOn(e -> e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null)
                .extracting(e -> e.getValueFrom().getSecretKeyRef().getName() + "/" + e.getValueFrom().getSecretKeyRef().getKey())
                .containsExactlyInAnyOrder("shipments-cassandra/username", "shipments-cassandra/password");
    }

    private static String example(String file) {
        return LocalService.repoDir().resolve("deploy/examples").resolve(file).toString();
    }

    private static Phase phase(String ns, String name) {
        StreamJob job = kube.admin().resources(StreamJob.class).inNamespace(ns).withName(name).get();
        return job == null || job.getStatus() == null ? null : job.getStatus().phase;
    }

    record Shipment(String id, String status, String json, boolean bad, String row) {
    }

    /**
     * Shipment events over 400 ids; every 97th is not JSON and every 89th a delivery without a
     * weight (both must be dead-lettered); {@code row} is what a good delivered one writes.
     */
    private static List<Shipment> shipments(int count) {
        Random random = new Random(7);
        String[][] places = {{"Lyon", "FR"}, {"Porto", "PT"}, {"Gent", "BE"}, {"Graz", "AT"}};
        String[] statuses = {"DELIVERED", "IN_TRANSIT", "RETURNED"};
        List<Shipment> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String id = "s-" + random.nextInt(400);
            String status = statuses[random.nextInt(statuses.length)];
            String[] place = places[random.nextInt(places.length)];
            String order = "o-" + random.nextInt(10_000);
            double weight = random.nextInt(2000) / 100.0;
            if (i % 97 == 96) {
                out.add(new Shipment(id, status, "{\"shipment\": {\"id\": \"" + id + "\", ", true, null));
            } else if (i % 89 == 88) {
                out.add(new Shipment(id, "DELIVERED", "{\"shipment\": {\"id\": \"" + id + "\", \"order\": {\"id\": \"" + order
                        + "\"}, \"address\": {\"city\": \"" + place[0] + "\", \"country\": \"" + place[1]
                        + "\"}}, \"status\": \"DELIVERED\"}", true, null));
            } else {
                String json = "{\"shipment\": {\"id\": \"" + id + "\", \"order\": {\"id\": \"" + order + "\"}, \"weightKg\": "
                        + weight + ", \"address\": {\"city\": \"" + place[0] + "\", \"country\": \"" + place[1]
                        + "\"}}, \"status\": \"" + status + "\"}";
                out.add(new Shipment(id, status, json, false, order + " " + place[0] + " " + place[1] + " " + weight));
            }
        }
        return out;
    }

    /** The last good delivered event of each id (all events of an id share its key, hence its partition and order). */
    private static Map<String, String> expectedDeliveries(List<Shipment> shipments) {
        Map<String, String> rows = new TreeMap<>();
        shipments.stream().filter(s -> !s.bad && s.status.equals("DELIVERED")).forEach(s -> rows.put(s.id, s.row));
        return rows;
    }

    private static Map<String, String> deliveries() {
        Map<String, String> rows = new TreeMap<>();
        for (Row r : cassandra.session().execute("SELECT shipment_id, order_id, city, country, weight_kg FROM shop.deliveries")) {
            rows.put(r.getString(0), r.getString(1) + " " + r.getString(2) + " " + r.getString(3) + " " + r.getDouble(4));
        }
        return rows;
    }

    /** Rows of the dead-letter table; -1 until the worker has created it. */
    private static long deadLetters() {
        if (cassandra.session().getMetadata().getKeyspace("shop").flatMap(k -> k.getTable("deliveries_dead_letters")).isEmpty()) {
            return -1;
        }
        return cassandra.session().execute("SELECT count(*) FROM shop.deliveries_dead_letters").one().getLong(0);
    }

    /** Every order id with its last record in offset order: "status amount". */
    private static Map<String, String> expectedArchive(List<OrderStream.Produced> produced) {
        List<OrderStream.Produced> inOrder = new ArrayList<>(produced);
        inOrder.sort(Comparator.comparingInt(OrderStream.Produced::partition).thenComparingLong(OrderStream.Produced::offset));
        Map<String, String> rows = new TreeMap<>();
        inOrder.forEach(p -> rows.put(p.id(), p.status() + " " + p.amount()));
        return rows;
    }

    private static Map<String, String> archive() {
        Map<String, String> rows = new TreeMap<>();
        for (Row r : cassandra.session().execute("SELECT order_id, status, amount FROM shop.orders_archive")) {
            rows.put(r.getString(0), r.getString(1) + " " + r.getDouble(2));
        }
        return rows;
    }
}
