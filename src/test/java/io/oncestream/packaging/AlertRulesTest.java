package io.oncestream.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.oncestream.testing.Command;

/**
 * The alert rules of deploy/monitoring (rendered from the chart): Prometheus' own promtool
 * accepts them and their unit tests pass; every alert has a test in which it fires and a
 * runbook section in docs/monitoring.md.
 */
class AlertRulesTest {

    private static final Path DIR = Path.of("deploy/monitoring");

    @Test
    void promtoolAcceptsTheRulesAndTheirTestsPass() {
        Command.Result check = Command.of("promtool", "check", "rules", "oncestream-alerts.yaml").directory(DIR).run(Duration.ofMinutes(1));
        assertThat(check.exitCode()).as(check.stdout() + check.stderr()).isZero();
        assertThat(check.stdout()).contains("SUCCESS: " + alerts().size() + " rules found");
        Command.Result test = Command.of("promtool", "test", "rules", "oncestream-alerts.test.yaml").directory(DIR).run(Duration.ofMinutes(1));
        assertThat(test.exitCode()).as(test.stdout() + test.stderr()).isZero();
        assertThat(test.stdout()).contains("SUCCESS");
    }

    @Test
    void everyAlertFiresInATestAndHasARunbook() throws Exception {
        String tests = Files.readString(DIR.resolve("oncestream-alerts.test.yaml"));
        String runbooks = Files.readString(Path.of("docs/monitoring.md"));
        assertThat(alerts()).hasSize(10);
        for (String alert : alerts()) {
            Matcher fires = Pattern.compile("alertname: " + alert + "\\n\\s+exp_alerts:\\n\\s+- exp_labels").matcher(tests);
            assertThat(fires.find()).as("a promtool test in which %s fires", alert).isTrue();
            assertThat(runbooks).as("the runbook of %s", alert).contains("\n### " + alert + "\n");
        }
    }

    private static List<String> alerts() {
        try {
            List<String> out = new ArrayList<>();
            Matcher m = Pattern.compile("- alert: (\\w+)").matcher(Files.readString(DIR.resolve("oncestream-alerts.yaml")));
            while (m.find()) {
                out.add(m.group(1));
            }
            return out;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
