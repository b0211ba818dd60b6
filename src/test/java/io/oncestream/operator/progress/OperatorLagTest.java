package io.oncestream.operator.progress;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.javaoperatorsdk.operator.processing.event.ResourceID;

import io.oncestream.contract.StartingOffsets;
import io.oncestream.engine.SourceException;
import io.oncestream.engine.SourceLag;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.testing.Awaits;

/**
 * The operator probes the lag of the jobs it was asked about on its own schedule: a reading
 * reconciles its job only when it changed or records are behind, a failing job backs off, and
 * the jobs of a Kafka cluster that does not answer cost a few probes together, not one each.
 * Probes are counted through a fake probe, so nothing here depends on how fast the machine is;
 * one test runs the real probe against a closed port.
 */
class OperatorLagTest {

    /** A closed port on loopback: nothing listens there. */
    private static final String DEAD_KAFKA = "127.0.0.1:1";
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** Pauses long enough that no job's second turn comes within a test's look at its first. */
    private static final OperatorLag.Timing SLOW = new OperatorLag.Timing(Duration.ofSeconds(5), Duration.ofSeconds(5),
            Duration.ofSeconds(60), Duration.ofSeconds(30));
    private static final OperatorLag.Timing FAST = new OperatorLag.Timing(Duration.ofMillis(20), Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofMillis(50));

    private final List<ResourceID> reconciles = new CopyOnWriteArrayList<>();
    private final Set<ResourceID> deleted = ConcurrentHashMap.newKeySet();
    private final FakeKafka kafka = new FakeKafka();
    private OperatorLag lag;

    @AfterEach
    void close() {
        if (lag != null) {
            lag.close();
        }
    }

    @Test
    void theJobsOfAClusterThatDoesNotAnswerCostAFewProbesNotOneEach() {
        lag = start(kafka, SLOW);
        IntStream.range(0, 200).forEach(i -> lag.lag(job(i), source(DEAD_KAFKA, "group-" + i), false));

        Awaits.until(WAIT, "every job's first turn", () -> kafka.reads.get() + lag.deferredTurns() >= 200);
        // Two failures in a row pause the cluster; a probe the other thread started before may still fail.
        assertThat(kafka.reads.get()).as("probes of 200 jobs on one dead cluster")
                .isLessThanOrEqualTo(ClusterPauses.FAILURES_TO_PAUSE + OperatorLag.THREADS);
        assertThat(reconciles).as("a job nobody can read: nothing to reconcile").isEmpty();
        Awaits.until(WAIT, "every failed probe closed", () -> kafka.closed.get() == kafka.opened.get());
        assertThat(lag.lag(job(0), source(DEAD_KAFKA, "group-0"), false)).isEmpty();
    }

    @Test
    void whenTheClusterAnswersAgainEveryJobIsReadAndReconciled() {
        lag = start(kafka, FAST);
        IntStream.range(0, 20).forEach(i -> lag.lag(job(i), source(DEAD_KAFKA, "group-" + i), false));
        Awaits.until(WAIT, "the cluster paused", () -> lag.deferredTurns() > 0);

        kafka.answer = Map.of("orders-0", new SourceLag(520, 520, null, false));
        Awaits.until(WAIT, "a reading of every job", () -> Set.copyOf(reconciles).size() == 20);
        assertThat(lag.lag(job(7), source(DEAD_KAFKA, "group-7"), false)).get()
                .satisfies(r -> assertThat(r.partitions()).containsKey("orders-0"));
    }

    @Test
    void theSameZeroLagReconcilesOnceAndALagBehindReconcilesAtEveryReading() {
        kafka.answer = Map.of("orders-0", new SourceLag(520, 520, null, false));
        lag = start(kafka, FAST);
        lag.lag(job(0), source(DEAD_KAFKA, "group-0"), false);

        Awaits.until(WAIT, "four readings", () -> kafka.reads.get() >= 4);
        // A job's turns never overlap: the reconcile of a reading is asked for before the next probe.
        assertThat(reconciles).as("the first reading, then the same again and again").containsExactly(job(0));

        kafka.answer = Map.of("orders-0", new SourceLag(520, 600, 1_700_000_000_000L, false));
        int before = kafka.reads.get();
        Awaits.until(WAIT, "four readings with records behind", () -> kafka.reads.get() >= before + 4);
        assertThat(reconciles.size()).as("records behind: their age grows at every reading").isGreaterThanOrEqualTo(1 + 3);
    }

    @Test
    void aReleasedJobHasItsProbeClosedAndIsNotProbedAgain() throws InterruptedException {
        kafka.answer = Map.of("orders-0", new SourceLag(520, 520, null, false));
        lag = start(kafka, FAST);
        lag.lag(job(0), source(DEAD_KAFKA, "group-0"), false);
        Awaits.until(WAIT, "a reading", () -> kafka.reads.get() >= 2);

        lag.release(job(0));
        Awaits.until(WAIT, "the probe closed", () -> kafka.closed.get() == 1);
        int reads = kafka.reads.get();
        Thread.sleep(300); // not a synchronization: fifteen intervals in which nothing may probe
        assertThat(kafka.reads.get()).isEqualTo(reads);
        assertThat(lag.jobs()).isZero();
    }

    @Test
    void aJobWithASecretIsNeverProbed() {
        kafka.answer = Map.of("orders-0", new SourceLag(520, 520, null, false));
        lag = start(kafka, FAST);
        assertThat(lag.lag(job(0), source(DEAD_KAFKA, "with-secret"), true)).isEmpty();
        lag.lag(job(1), source(DEAD_KAFKA, "group-1"), false);
        Awaits.until(WAIT, "the other job read twice", () -> kafka.reads.get() >= 2);

        assertThat(kafka.groups).containsOnly("group-1");
        assertThat(lag.jobs()).isEqualTo(1);
        // A Secret added to a job that was probed: released.
        lag.lag(job(1), source(DEAD_KAFKA, "group-1"), true);
        assertThat(lag.jobs()).isZero();
    }

    @Test
    void aDeletedJobIsSweptAway() {
        kafka.answer = Map.of("orders-0", new SourceLag(520, 520, null, false));
        lag = start(kafka, FAST);
        lag.lag(job(0), source(DEAD_KAFKA, "group-0"), false);
        Awaits.until(WAIT, "a reading", () -> kafka.reads.get() >= 1);

        deleted.add(job(0));
        Awaits.until(WAIT, "the deleted job's probe closed", () -> lag.jobs() == 0 && kafka.closed.get() == 1);
    }

    /** The real probe: Kafka's clients refused at a closed port, the failure handled like any other. */
    @Test
    void aRealProbeOfAClosedPortFailsAndReconcilesNothing() {
        FakeKafka counted = new FakeKafka(OperatorLag.lagProbes(Duration.ofSeconds(1)));
        lag = start(counted, SLOW);
        IntStream.range(0, 5).forEach(i -> lag.lag(job(i), source(DEAD_KAFKA, "group-" + i), false));

        Awaits.until(WAIT, "the cluster paused after real failures", () -> lag.deferredTurns() > 0);
        assertThat(counted.failures.get()).isBetween(ClusterPauses.FAILURES_TO_PAUSE,
                ClusterPauses.FAILURES_TO_PAUSE + OperatorLag.THREADS);
        assertThat(reconciles).isEmpty();
        assertThat(lag.lag(job(0), source(DEAD_KAFKA, "group-0"), false)).isEmpty();
    }

    private OperatorLag start(Function<JobConfig.KafkaSource, OperatorLag.Probe> probes, OperatorLag.Timing timing) {
        return new OperatorLag(probes, reconciles::add, id -> !deleted.contains(id), timing);
    }

    private static ResourceID job(int i) {
        return new ResourceID("job-" + i, "shop");
    }

    private static JobConfig.KafkaSource source(String bootstrap, String group) {
        return new JobConfig.KafkaSource(bootstrap, List.of("orders"), StartingOffsets.EARLIEST, 1000, true, group, Map.of());
    }

    /**
     * Probes that answer {@link #answer} (or fail while it is null), or wrap real ones; counts
     * what was opened, read, failed and closed.
     */
    private static final class FakeKafka implements Function<JobConfig.KafkaSource, OperatorLag.Probe> {
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger reads = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();
        final List<String> groups = new CopyOnWriteArrayList<>();
        final Function<JobConfig.KafkaSource, OperatorLag.Probe> real;
        volatile Map<String, SourceLag> answer;

        FakeKafka() {
            this(null);
        }

        FakeKafka(Function<JobConfig.KafkaSource, OperatorLag.Probe> real) {
            this.real = real;
        }

        @Override
        public OperatorLag.Probe apply(JobConfig.KafkaSource source) {
            opened.incrementAndGet();
            groups.add(source.groupId());
            OperatorLag.Probe inner = real == null ? null : real.apply(source);
            return new OperatorLag.Probe() {
                @Override
                public Map<String, SourceLag> read() {
                    reads.incrementAndGet();
                    try {
                        if (inner != null) {
                            return inner.read();
                        }
                        Map<String, SourceLag> now = answer;
                        if (now == null) {
                            throw new SourceException("cannot read the lag from Kafka at " + source.bootstrapServers()
                                    + ": connection refused");
                        }
                        return now;
                    } catch (SourceException e) {
                        failures.incrementAndGet();
                        throw e;
                    }
                }

                @Override
                public void close() {
                    closed.incrementAndGet();
                    if (inner != null) {
                        inner.close();
                    }
                }
            };
        }
    }
}
