package io.oncestream.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.oncestream.testing.LocalService;

/** Output held to a committed file under {@code src/test/resources/formats/}; a different output is written to target/formats/ to compare. */
final class CommittedFormats {

    /** The StreamJob's header of the format tests' jobs. */
    static final String METADATA = """
            apiVersion: oncestream.io/v1alpha1
            kind: StreamJob
            metadata: {name: orders, namespace: shop, uid: u-1, generation: 1}
            """;

    /** A job with only the required fields. */
    static final String REQUIRED_ONLY = METADATA + """
            spec:
              source: {kafka: {bootstrapServers: "kafka:9092", topics: [orders]}}
              sink:
                cassandra: {contactPoints: ["cassandra:9042"], localDatacenter: dc1, keyspace: shop, table: orders,
                            columns: {id: value.id}}
            """;

    private CommittedFormats() {
    }

    static void assertMatches(String written, String file, String what) throws IOException {
        Path golden = LocalService.repoDir().resolve("src/test/resources/formats").resolve(file);
        if (!Files.exists(golden) || !Files.readString(golden).equals(written)) {
            Path actual = LocalService.repoDir().resolve("target/formats").resolve(file);
            Files.createDirectories(actual.getParent());
            Files.writeString(actual, written);
        }
        assertThat(golden).as(what + ": no committed file (this build's is in target/formats/" + file + ")").exists();
        assertThat(written).as(what + " (written to target/formats/" + file + ")").isEqualTo(Files.readString(golden));
    }
}
