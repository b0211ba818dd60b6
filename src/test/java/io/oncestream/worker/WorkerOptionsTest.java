package io.oncestream.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.oncestream.contract.ChainPoint;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;

class WorkerOptionsTest {

    private static final String[] BASE = {"--config", "job.json", "--checkpoint", "/checkpoint"};

    private static String[] with(String... more) {
        String[] args = java.util.Arrays.copyOf(BASE, BASE.length + more.length);
        System.arraycopy(more, 0, args, BASE.length, more.length);
        return args;
    }

    @Test
    void aDrainedWorkerExitsUnlessToldToWait() {
        assertThat(WorkerOptions.parse(BASE, Map.of()).waitWhenDone()).isFalse();
        assertThat(WorkerOptions.parse(with("--when-done", "exit"), Map.of()).waitWhenDone()).isFalse();
        assertThat(WorkerOptions.parse(with("--when-done", "wait"), Map.of()).waitWhenDone()).isTrue();
        assertThatThrownBy(() -> WorkerOptions.parse(with("--when-done", "linger"), Map.of()))
                .hasMessageStartingWith("--when-done takes exit or wait, not linger");
    }

    @Test
    void theCheckpointLockIsWaitedForTenMinutesUnlessToldOtherwise() {
        assertThat(WorkerOptions.parse(BASE, Map.of()).lockWait()).isEqualTo(java.time.Duration.ofMinutes(10));
        assertThat(WorkerOptions.parse(with("--lock-wait", "30"), Map.of()).lockWait()).isEqualTo(java.time.Duration.ofSeconds(30));
        assertThatThrownBy(() -> WorkerOptions.parse(with("--lock-wait", "-1"), Map.of()))
                .hasMessageStartingWith("--lock-wait must not be negative");
        assertThatThrownBy(() -> WorkerOptions.parse(with("--lock-wait", "soon"), Map.of()))
                .hasMessageStartingWith("--lock-wait: 'soon' is not a number");
        assertThat(WorkerOptions.parse(with(), Map.of()).lagInterval()).isEqualTo(java.time.Duration.ofSeconds(5));
        assertThat(WorkerOptions.parse(with("--lag-interval", "0"), Map.of()).lagInterval()).isZero();
        assertThatThrownBy(() -> WorkerOptions.parse(with("--lag-interval", "-2"), Map.of()))
                .hasMessageStartingWith("--lag-interval must not be negative");
    }

    @Test
    void theIndexComesFromThePodNameUnlessGiven() {
        assertThat(WorkerOptions.parse(BASE, Map.of("POD_NAME", "paid-orders-2")).workerIndex()).isEqualTo(2);
        assertThat(WorkerOptions.parse(with("--worker-index", "1"), Map.of("POD_NAME", "paid-orders-2")).workerIndex()).isEqualTo(1);
    }

    @Test
    void theSavepointIsTheOneBesideTheConfigurationUnlessGiven(@TempDir Path dir) throws Exception {
        String config = dir.resolve("job.json").toString();
        String[] args = {"--config", config, "--checkpoint", "/checkpoint"};
        assertThat(WorkerOptions.parse(args, Map.of()).savepoint()).as("none: the job's first epoch").isNull();
        Files.writeString(dir.resolve("savepoint.json"), "v1\n{}\n");
        assertThat(WorkerOptions.parse(args, Map.of()).savepoint()).isEqualTo(dir.resolve("savepoint.json"));
        assertThat(WorkerOptions.parse(with("--savepoint", "/other/savepoint"), Map.of()).savepoint())
                .isEqualTo(Path.of("/other/savepoint"));
    }

    @Test
    void aSavepointOfAnotherJobOrShapeIsAConfigurationError(@TempDir Path dir) throws Exception {
        JobConfig config = JobConfigs.parse("""
                {"jobId": "shop/paid-orders", "parallelism": 3,
                 "source": {"bootstrapServers": "k:9092", "topics": ["orders"]},
                 "sink": {"contactPoints": ["c:9042"], "localDatacenter": "dc1", "keyspace": "shop", "table": "t",
                          "columns": {"id": "value.id"}}}
                """);
        Path file = dir.resolve("savepoint.json");
        Savepoint fits = new Savepoint("shop/paid-orders", 2, 2, 3, Map.of("orders-0", new ChainPoint(5, 9)), List.of(1L, 2L));
        Files.writeString(file, fits.encode());
        assertThat(WorkerMain.readSavepoint(file, config)).isEqualTo(fits);
        assertThat(WorkerMain.readSavepoint(null, config)).isNull();

        Files.writeString(file, new Savepoint("shop/other", 2, 2, 3, Map.of(), List.of(1L, 2L)).encode());
        assertThatThrownBy(() -> WorkerMain.readSavepoint(file, config))
                .hasMessage("the savepoint " + file + " belongs to job 'shop/other', not 'shop/paid-orders'");
        Files.writeString(file, new Savepoint("shop/paid-orders", 2, 3, 4, Map.of(), List.of(1L, 2L, 3L)).encode());
        assertThatThrownBy(() -> WorkerMain.readSavepoint(file, config))
                .hasMessage("the savepoint " + file + " starts epoch 2 with 4 workers, but the configuration has parallelism 3");
        Files.writeString(file, "v1\n{\"jobId\": \"shop/paid-orders\"");
        assertThatThrownBy(() -> WorkerMain.readSavepoint(file, config)).hasMessageStartingWith(file + ": not a valid Savepoint");
    }
}
