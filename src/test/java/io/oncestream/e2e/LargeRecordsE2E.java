package io.oncestream.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.StreamJobStatus.Phase;
import io.oncestream.engine.OrderStream;
import io.oncestream.testing.Awaits;

/**
 * Records from 10 KB to 2 MB among small ones, rows and malformed ones (dead letters), several
 * in a batch, and one row over Cassandra's 16 MiB limit, through workers on the node: the job
 * is never Failed, the table and the dead-letter table end exactly as the records say, and the
 * consumer group never runs ahead of the table.
 */
class LargeRecordsE2E extends E2ETest {

    private static final int OVER_THE_LIMIT = 17 << 20;

    @Test
    void largeRowsAndDeadLettersNeverFailTheJob() throws Exception {
        E2EJob job = E2EJob.own(kube, kafka, cassandra, "e2e-large", 2, 200,
                Map.of("max.message.bytes", Integer.toString(24 << 20)));
        List<Integer> sizes = List.of(10_000, 30_000, 30_000, -30_000, 30_000, 100_000, 30_000, -60_000, 500_000, 30_000,
                2_000_000, -2_000_000, 30_000, 1_000_000, 30_000, -10_000, 30_000, 30_000);
        job.produce(300);
        job.orders.produceLarge(kafka, job.topic, sizes);
        job.apply(Map.of("maxRecordsPerBatch: 50000", "maxRecordsPerBatch: 40", "interval: 1s", "interval: 300ms"));

        Set<Phase> phases = new TreeSet<>();
        List<String> violations = new ArrayList<>();
        job.produce(200);
        OrderStream.Produced oversized = job.orders.produceLarge(kafka, job.topic, List.of(OVER_THE_LIMIT)).get(0);
        job.orders.markBad(oversized.partition(), oversized.offset());
        job.orders.produceLarge(kafka, job.topic, sizes);
        job.produce(300);
        // Sampled until the table is exact and the lag 0; if that never comes, awaitExactTable below fails with the difference.
        Awaits.within(E2ESettings.WAIT, Duration.ofMillis(500), () -> {
            if (job.rows().equals(job.expectedRows()) && job.status() != null && Long.valueOf(0).equals(job.status().lag)) {
                return true;
            }
            StreamJobStatus s = job.status();
            if (s != null && s.phase != null) {
                phases.add(s.phase);
            }
            violations.addAll(job.groupOffsetsAheadOfTable());
            return false;
        });
        job.awaitExactTable(E2ESettings.WAIT);
        System.out.println("[e2e] phases seen while large records were written: " + phases);
        assertThat(phases).as("phases seen").doesNotContain(Phase.Failed);
        assertThat(violations).as("consumer-group offsets ahead of the table").isEmpty();
        assertThat(OrderStream.actualDeadLetters(cassandra.session(), job.keyspace, "paid_orders_dead_letters"))
                .isEqualTo(job.orders.expectedDeadLetters(job.topic));
        StreamJobStatus done = job.awaitStatus("Running, every bad record counted", Duration.ofSeconds(60),
                s -> s.phase == Phase.Running && s.totals != null && s.totals.deadLettered != null
                        && s.totals.deadLettered == job.orders.expectedDeadLetters(job.topic).size());
        System.out.println("[e2e] " + E2EJob.describe(done) + "; totals read " + done.totals.read + ", written "
                + done.totals.written + ", dead-lettered " + done.totals.deadLettered);
    }
}
