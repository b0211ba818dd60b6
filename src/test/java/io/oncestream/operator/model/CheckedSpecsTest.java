package io.oncestream.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.oncestream.api.StreamJob;
import io.oncestream.operator.TestJobs;

class CheckedSpecsTest {

    @Test
    void aSpecIsCheckedOncePerGenerationAndDeletedJobsAreForgotten() {
        AtomicInteger compiled = new AtomicInteger();
        CheckedSpecs specs = new CheckedSpecs(job -> {
            compiled.incrementAndGet();
            return WorkerJobConfigs.from(job);
        });
        StreamJob job = TestJobs.job("");
        for (int i = 0; i < 5; i++) {
            assertThat(specs.of(job, Set::of).config().filter()).isEqualTo(job.getSpec().filter);
        }
        assertThat(compiled).hasValue(1);

        job.getSpec().filter = "value.amount >";
        job.getMetadata().setGeneration(4L);
        assertThat(specs.of(job, Set::of).error()).startsWith("spec.filter");
        assertThat(specs.of(job, Set::of).config()).isNull();
        assertThat(compiled).hasValue(2);

        for (int i = 0; i < CheckedSpecs.PRUNE_EVERY; i++) {
            StreamJob other = TestJobs.job("");
            other.getMetadata().setUid("uid-" + i);
            specs.of(other, () -> Set.of("1234-abcd"));
        }
        // The 256th check pruned to the live job; the two checked after it came back in.
        assertThat(specs.size()).as("deleted jobs are forgotten").isEqualTo(3);
        assertThat(specs.of(job, Set::of).error()).startsWith("spec.filter");
        assertThat(compiled).as("the live job was kept").hasValue(2 + CheckedSpecs.PRUNE_EVERY);
    }
}
