package io.oncestream.e2e;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.oncestream.testing.Awaits;

/** A background producer: {@code perTick} order events every {@code tick} until closed. */
final class Producing implements AutoCloseable {

    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong sent = new AtomicLong();
    private final Thread thread;
    private volatile RuntimeException failure;

    Producing(E2EJob job, int perTick, Duration tick) {
        thread = new Thread(() -> {
            while (running.get()) {
                try {
                    job.produce(perTick);
                    sent.addAndGet(perTick);
                    Thread.sleep(tick.toMillis()); // the producer's pace, not a synchronization
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    failure = e;
                    return;
                }
            }
        }, "e2e-producer");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Waits until this producer has sent {@code records} more records than when called: a stretch
     * of the test during which records keep arriving. Fails if producing fails meanwhile.
     */
    void awaitSent(int records, String during) {
        long from = sent.get();
        Awaits.until(E2ESettings.WAIT, records + " more records produced " + during, () -> {
            check();
            return sent.get() >= from + records;
        });
    }

    /** Fails if producing failed (it stopped then); else returns. */
    void check() {
        if (failure != null) {
            throw new IllegalStateException("the producer failed", failure);
        }
    }

    /** Stops producing; fails if producing failed. */
    @Override
    public void close() {
        running.set(false);
        try {
            thread.join(60_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (failure != null) {
            throw new IllegalStateException("the producer failed", failure);
        }
    }
}
