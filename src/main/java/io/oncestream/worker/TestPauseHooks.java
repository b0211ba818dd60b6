package io.oncestream.worker;

import io.oncestream.engine.ProtocolHooks;
import io.oncestream.engine.ProtocolStep;

/**
 * For crash tests only: with {@code ONCESTREAM_TEST_PAUSE_AT=STEP:BATCH} (e.g. {@code AFTER_WAL:1})
 * the worker prints {@code ONCESTREAM-TEST-PAUSED STEP BATCH} when it reaches that protocol step
 * of that batch and then blocks, so the test can {@code kill -9} it at exactly that point.
 */
final class TestPauseHooks implements ProtocolHooks {

    static final String ENV = "ONCESTREAM_TEST_PAUSE_AT";

    private final ProtocolStep step;
    private final long batchId;

    private TestPauseHooks(ProtocolStep step, long batchId) {
        this.step = step;
        this.batchId = batchId;
    }

    static ProtocolHooks fromEnvironment(String value) {
        if (value == null || value.isBlank()) {
            return ProtocolHooks.NONE;
        }
        String[] parts = value.split(":");
        if (parts.length != 2) {
            throw new IllegalArgumentException(ENV + " must be STEP:BATCH, was '" + value + "'");
        }
        return new TestPauseHooks(ProtocolStep.valueOf(parts[0]), Long.parseLong(parts[1]));
    }

    @Override
    public void reached(ProtocolStep reached, long batch) {
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
