package io.oncestream.operator;

import io.fabric8.kubernetes.client.utils.Serialization;

import io.oncestream.api.StreamJob;

/** The example job of deploy/examples/paid-orders.yaml as the operator's unit tests use it, with settings of their own. */
public final class TestJobs {

    private TestJobs() {
    }

    /**
     * The example in namespace {@code shop}, without its optional deadLetter, trigger,
     * parallelism and checkpoint settings, and with {@code extraSpec} (lines of {@code spec}) added.
     */
    public static StreamJob job(String extraSpec) {
        try {
            String example = java.nio.file.Files.readString(io.oncestream.testing.LocalService.repoDir()
                    .resolve("deploy/examples/paid-orders.yaml"));
            String yaml = example.replace("  name: paid-orders\n", "  name: paid-orders\n  namespace: shop\n  uid: 1234-abcd\n"
                    + "  generation: 3\n");
            // Drop the example's optional settings that some tests set themselves.
            yaml = yaml.replaceAll("(?m)^  (deadLetter|trigger|parallelism|checkpoint):.*\n(    .*\n)*", "");
            return Serialization.unmarshal(yaml + extraSpec, StreamJob.class);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
