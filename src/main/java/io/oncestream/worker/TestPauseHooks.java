package io.oncestream.worker;

import io.oncestream.engine.ProtocolHooks;
import io.oncestream.engine.ProtocolStep;

/**
 * For crash tests only: with {@code ONCESTREAM_TEST_PAUSE_AT=STEP:BATCH} (e.g. {@code AFTER_WAL:1})
 * the worker prints {@code ONCESTREAM-TEST-PAUSED STEP BATCH} when it reaches that protocol step
 * of that batch and then blocks, so the test can {@code kill -9} it at exactly that point. With
 * {@code ONCESTREAM_TEST_FAIL_AT=STEP:BATCH} it throws an unexpected exception there instead,
 * once per process: what a transient failure nobody foresaw does. With
 * {@code ONCESTREAM_TEST_HOLD_AT=STEP:BATCH} and {@code ONCESTREAM_TEST_RELEASE_FILE=PATH} it
 * prints {@code ONCESTREAM-TEST-HELD STEP BATCH} there and goes on once that file exists, so
 * the test can change the world at exactly that point (fill the checkpoint volume, say).
 */
final class TestPauseHooks implements ProtocolHooks {

    static final String ENV = "ONCESTREAM_TEST_PAUSE_AT";
    static final String FAIL_ENV = "ONCESTREAM_TEST_FAIL_AT";
    static final String HOLD_ENV = "ONCESTREAM_TEST_HOLD_AT";
    static final String RELEASE_ENV = "ONCESTREAM_TEST_RELEASE_FILE";
    /** Entries per segment of the checkpoint's logs, instead of the default (read by {@link WorkerMain}). */
    static final String SEGMENT_ENTRIES_ENV = "ONCESTREAM_TEST_SEGMENT_ENTRIES";

    private static final java.util.concurrent.atomic.AtomicBoolean FAILED_ONCE = new java.util.concurrent.atomic.AtomicBoolean();

    private final ProtocolStep step;
    private final long batchId;
    private final boolean fail;
    /** Where a hold ends (a file that appears), or null for a pause that lasts until SIGKILL. */
    private final java.nio.file.Path release;

    private TestPauseHooks(ProtocolStep step, long batchId, boolean fail, java.nio.file.Path release) {
        this.step = step;
        this.batchId = batchId;
        this.fail = fail;
        this.release = release;
    }

    /**
     * The hooks the variables ask for: a pause if {@link #ENV} is set, else a hold if
     * {@link #HOLD_ENV} is, else a failure if {@link #FAIL_ENV} is.
     */
    static ProtocolHooks fromEnvironment(java.util.Map<String, String> env) {
        ProtocolHooks pause = parse(ENV, env.get(ENV), false, null);
        if (pause != ProtocolHooks.NONE) {
            return pause;
        }
        if (env.get(HOLD_ENV) != null && !env.get(HOLD_ENV).isBlank()) {
            String release = env.get(RELEASE_ENV);
            if (release == null || release.isBlank()) {
                throw new IllegalArgumentException(HOLD_ENV + " needs " + RELEASE_ENV);
            }
            return parse(HOLD_ENV, env.get(HOLD_ENV), false, java.nio.file.Path.of(release));
        }
        return parse(FAIL_ENV, env.get(FAIL_ENV), true, null);
    }

    private static ProtocolHooks parse(String variable, String value, boolean fail, java.nio.file.Path release) {
        if (value == null || value.isBlank()) {
            return ProtocolHooks.NONE;
        }
        String[] parts = value.split(":");
        if (parts.length != 2) {
            throw new IllegalArgumentException(variable + " must be STEP:BATCH, was '" + value + "'");
        }
        return new TestPauseHooks(ProtocolStep.valueOf(parts[0]), Long.parseLong(parts[1]), fail, release);
    }

    @Override
    public void reached(ProtocolStep reached, long batch) {
        if (reached == step && batch == batchId && release != null) {
            System.out.println("ONCESTREAM-TEST-HELD " + reached + " " + batch);
            System.out.flush();
            while (!java.nio.file.Files.exists(release)) {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            return;
        }
        if (reached == step && batch == batchId && fail) {
            if (FAILED_ONCE.compareAndSet(false, true)) {
                throw new IllegalStateException("test failure injected at " + reached + " of batch " + batch);
            }
            return;
        }
        if (reached == step && batch == batchId) {
            System.out.println("ONCESTREAM-TEST-PAUSED " + reached + " " + batch);
            System.out.flush();
            while (true) {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    // keep blocking: only SIGKILL ends this process
                }
            }
        }
    }
}
