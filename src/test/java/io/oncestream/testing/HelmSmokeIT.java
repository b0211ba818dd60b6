package io.oncestream.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Proves the helm built for the tests lints and renders a chart the real API server accepts. */
@ExtendWith(KubeExtension.class)
class HelmSmokeIT {

    @Test
    void lintAndTemplateASmallChart(KubeCluster kube, @TempDir Path broken) throws Exception {
        String chart = Path.of(HelmSmokeIT.class.getResource("/smoke/chart").toURI()).toString();

        Command.Result lint = kube.helm("lint", chart).orThrow();
        Command.Result rendered = kube.helm("template", "demo", chart, "--set", "greeting=hi there").orThrow();
        Files.createDirectories(broken.resolve("templates"));
        Files.writeString(broken.resolve("Chart.yaml"), "apiVersion: v2\nname: broken\nversion: 0.1.0\n");
        Files.writeString(broken.resolve("templates/bad.yaml"), "data: {{ .Values.greeting \n");
        Command.Result brokenLint = kube.helm("lint", broken.toString());

        assertThat(lint.stdout()).contains("1 chart(s) linted, 0 chart(s) failed");
        assertThat(rendered.stdout()).contains("name: demo-greeting").contains("greeting: \"hi there\"");
        assertThat(brokenLint.exitCode()).isNotZero();
        assertThat(brokenLint.stdout() + brokenLint.stderr()).contains("parse error");

        String ns = kube.createNamespace("smoke-helm");
        Command.Result dryRun = kube.kubectl(rendered.stdout(), "apply", "--dry-run=server", "-n", ns, "-f", "-");
        assertThat(dryRun.orThrow().stdout()).contains("configmap/demo-greeting created (server dry run)");
    }
}
