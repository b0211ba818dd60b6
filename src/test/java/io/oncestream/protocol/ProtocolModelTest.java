package io.oncestream.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.oncestream.testing.LocalService;

/**
 * The protocol models (model/protocol.pml, and the rescale hand-off's model/rescale.pml;
 * docs/protocol.md) checked with Spin on every test run: exhaustively, every property holds; and every mutation of the protocol yields a
 * counterexample, printed as its sequence of protocol steps. Needs {@code spin} and
 * {@code gcc} (installed by .ci/run).
 */
class ProtocolModelTest {

    private static final List<String> MUTATIONS = List.of("COMMIT_BEFORE_ACK", "NO_FSYNC_OFFSETS",
            "FRESH_TIMESTAMPS_ON_REPLAY", "SKIP_OPEN_BATCH", "GROUP_BEFORE_COMMIT", "COMMIT_NOT_AWAITED", "NO_COMMIT_IN_WAL",
            "NO_FSYNC_AT_START");
    /** model/rescale.pml's mutations of the hand-off (docs/protocol.md §11). */
    private static final List<String> RESCALE_MUTATIONS = List.of("NEW_OWNER_RESTARTS_CHAIN", "SAVEPOINT_BEFORE_SEAL",
            "SEALED_WORKER_PLANS_AGAIN", "SEAL_FROM_OFFSETS_NOT_COMMITS", "REPORT_SEAL_BEFORE_FSYNC", "EMPTY_SEAL_FORGETS_SAVEPOINT");

    @Test
    void theProtocolHoldsAndEveryMutationIsCaught() throws IOException, InterruptedException {
        Path script = LocalService.repoDir().resolve("model/check.sh");
        Path log = Files.createTempFile("protocol-model", ".log");
        Process process = new ProcessBuilder("bash", script.toString()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        boolean finished = process.waitFor(10, TimeUnit.MINUTES);
        if (!finished) {
            process.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        Files.delete(log);
        if (!finished) {
            fail("model/check.sh did not finish within 10 minutes:\n" + output);
        }
        System.out.println(output);
        if (output.contains("is not installed")) {
            fail("Spin is needed to check the protocol model: apt-get install spin gcc\n" + output);
        }
        assertThat(process.exitValue()).as(output).isZero();
        assertThat(output).contains("[model] protocol: holds — table_exact, timestamps_stable, replay_exact, "
                + "group_behind_table, recoverable;");
        for (String mutation : MUTATIONS) {
            assertThat(output).as(mutation).containsPattern("\\[model\\] MUTATION_" + mutation
                    + ": counterexample, [a-z_]+ violated;[^\\n]*trail:\\n(     [^\\n]+\\n)+");
        }
        for (String shape : List.of("2 -> 1", "2 -> 3", "2 -> 3 -> 1")) {
            assertThat(output).as("rescale " + shape).containsPattern("\\[model\\] rescale " + Pattern.quote(shape)
                    + " \\(MAXCRASH \\d\\): holds — table_exact, timestamps_stable, single_owner, group_behind_table,"
                    + " older_epoch_sealed, no invalid end state;");
        }
        for (String mutation : RESCALE_MUTATIONS) {
            assertThat(output).as(mutation).containsPattern("\\[model\\] rescale MUTATION_" + mutation
                    + ": counterexample, [a-z_ ]+ violated;[^\\n]*trail[^\\n]*:\\n(     [^\\n]+\\n)+");
        }
    }
}
