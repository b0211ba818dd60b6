package io.oncestream.operator.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.operator.TestJobs;

/** A StreamJob's worker configuration: what the spec says, the worker's defaults for the rest, errors by spec field. */
class WorkerJobConfigsTest {

    @Test
    void durationsAreReadAndABadOneIsNamedByItsSpecField() {
        JobConfig config = WorkerJobConfigs.from(TestJobs.job("  trigger: {interval: 1m30s}\n  restartPolicy: {maxBackoff: 2h}\n"));
        assertThat(config.trigger().intervalMs()).isEqualTo(90_000);
        assertThat(config.restart().maxBackoffMs()).isEqualTo(7_200_000);
        assertInvalid("  trigger: {interval: soon}\n", "spec.trigger.interval", "'soon' is not a duration like 500ms, 1s, 1m");
        assertInvalid("  restartPolicy: {maxBackoff: 1d}\n", "spec.restartPolicy.maxBackoff", "'1d' is not a duration like 500ms, 1s, 1m");
        assertInvalid("  restartPolicy: {maxBackoff: 500ms}\n", "spec.restartPolicy.maxBackoff",
                "must be 1000..86400000 (1 s to 1 day), was 500");
    }

    @Test
    void whatTheSpecLeavesOutTakesTheWorkersDefaults() {
        JobConfig config = WorkerJobConfigs.from(TestJobs.job("  trigger: {availableNow: true}\n  checkpoint: {size: 2Gi}\n"));
        assertThat(config.trigger().intervalMs()).isEqualTo(1_000);
        assertThat(config.trigger().availableNow()).isTrue();
        assertThat(config.checkpoint().retainBatches()).isEqualTo(100);
        assertThat(config.parallelism()).isEqualTo(1);
        assertThat(config.restart().maxBackoffMs()).isEqualTo(300_000);
        assertThat(config.sink().maxInFlight()).isEqualTo(256);
    }

    @Test
    void aWorkerConfigurationErrorIsNamedByItsSpecField() {
        assertInvalid("  parallelism: 0\n", "spec.parallelism", "must be at least 1");
        assertInvalid("  checkpoint: {retainBatches: 0}\n", "spec.checkpoint.retainBatches", "must be at least 1");
    }

    /**
     * After a restart every reconcile thread starts on jobs made from one template at once: one
     * compiles their expressions, the others wait for its answer, an error included. (Before,
     * each compiled them itself, cold; with eight threads released together this counted more
     * than one compilation.)
     */
    @Test
    void threadsThatCheckTheSameNewExpressionsAtOnceCompileThemOnce() throws Exception {
        for (String filter : new String[] {"value.amount > 17.5", "value.amount >> 17.5"}) {
            io.oncestream.api.StreamJob job = TestJobs.job("");
            job.getSpec().filter = filter + " && " + System.nanoTime() + " > 0"; // expressions no other test compiled
            int threads = 8;
            java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
            long before = WorkerJobConfigs.compilations();
            java.util.List<java.util.concurrent.Future<String>> checks = new java.util.ArrayList<>();
            for (int i = 0; i < threads; i++) {
                checks.add(pool.submit(() -> {
                    start.await();
                    try {
                        WorkerJobConfigs.from(job);
                        return "valid";
                    } catch (InvalidConfigException e) {
                        return e.field();
                    }
                }));
            }
            java.util.Set<String> answers = new java.util.HashSet<>();
            for (java.util.concurrent.Future<String> check : checks) {
                answers.add(check.get(60, java.util.concurrent.TimeUnit.SECONDS));
            }
            pool.shutdown();
            assertThat(WorkerJobConfigs.compilations() - before).as(filter).isEqualTo(1);
            assertThat(answers).as("every thread's answer for " + filter)
                    .containsExactly(filter.contains(">>") ? "spec.filter" : "valid");
        }
    }

    private static void assertInvalid(String extraSpec, String field, String reason) {
        assertThatThrownBy(() -> WorkerJobConfigs.from(TestJobs.job(extraSpec))).isInstanceOfSatisfying(InvalidConfigException.class,
                e -> assertThat(e.field() + ": " + e.reason()).isEqualTo(field + ": " + reason));
    }
}
