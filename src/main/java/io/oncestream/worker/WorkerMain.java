package io.oncestream.worker;

import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.oncestream.contract.EngineState;
import io.oncestream.contract.RestartMode;
import io.oncestream.engine.Backoff;
import io.oncestream.engine.FailureKind;
import io.oncestream.engine.MicroBatchEngine;
import io.oncestream.engine.Pause;
import io.oncestream.engine.ProgressTracker;
import io.oncestream.engine.StopRequestedException;
import io.oncestream.engine.checkpoint.Savepoint;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;
import io.oncestream.engine.failure.OncestreamException;

/**
 * The worker process. Exit codes: 0 after {@code availableNow} drained; 143 after SIGTERM (the
 * JVM's signal exit, once the engine stopped at a safe point and closed its resources); 1 when
 * the job failed permanently with {@code availableNow}; 2 for a bad command line or
 * configuration; 3 when the checkpoint's lock stayed held for longer than {@code --lock-wait}
 * (the kubelet then restarts the worker with its back-off).
 * Failures come in two kinds ({@link FailureKind}): a transient one is retried for ever, the
 * engine started again after a pause that doubles up to 30 s, while the worker reports it; a
 * permanent one leaves the worker up reporting {@code FAILED} (so it does not crash-loop) until
 * it is stopped, or, with {@code restart.onFailure: Backoff}, starts the engine again after a
 * pause that doubles from 10 s up to {@code restart.maxBackoffMs}. With {@code --when-done wait}
 * (how the operator runs workers) an {@code availableNow} job that drained ({@code COMPLETED})
 * or failed stays up too.
 */
public final class WorkerMain {

    static {
        WorkerLogging.install();
    }

    private static final Logger LOG = Logger.getLogger(WorkerMain.class.getName());
    private static final long FIRST_TRANSIENT_PAUSE_MS = 1_000;
    private static final long MAX_TRANSIENT_PAUSE_MS = 30_000;
    private static final long FIRST_RESTART_PAUSE_MS = 10_000;
    /** An engine that ran this long before it failed was healthy: the back-off starts again from its first pause. */
    private static final long HEALTHY_RUN_MS = 300_000;

    private WorkerMain() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        WorkerOptions options;
        JobConfig config;
        Savepoint savepoint;
        try {
            options = WorkerOptions.parse(args, System.getenv());
            config = KafkaSecrets.apply(JobConfigs.read(options.config()), System.getenv());
            if (options.workerIndex() >= config.parallelism()) {
                throw new IllegalArgumentException("worker index " + options.workerIndex() + " is not below parallelism "
                        + config.parallelism());
            }
            savepoint = readSavepoint(options.savepoint(), config);
        } catch (RuntimeException e) {
            System.err.println("oncestream worker: " + e.getMessage());
            return 2;
        }
        ProgressTracker progress = new ProgressTracker(config.jobId(), options.workerIndex(), config.parallelism());
        int epoch = savepoint == null ? 0 : savepoint.epoch();
        progress.epoch(epoch);
        AtomicInteger barrier = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch finished = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.set(true);
            try {
                finished.await(25, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }, "worker-shutdown"));
        try (LagWatch lag = LagWatch.start(config, options.workerIndex(), progress, options.lagInterval());
                WorkerHttpServer http = new WorkerHttpServer(options.httpHost(), options.httpPort(), progress::snapshot, progress::timings,
                () -> progress.state().working(), requested -> requestBarrier(barrier, epoch, requested))) {
            LOG.log(Level.INFO, "worker " + options.workerIndex() + " of job " + config.jobId()
                    + " serving http on " + options.httpHost() + ":" + http.port());
            return runUntilDone(config, options, savepoint, barrier, progress, stop);
        } catch (java.io.IOException e) {
            System.err.println("oncestream worker: cannot serve http on " + options.httpHost() + ":" + options.httpPort()
                    + ": " + e.getMessage());
            return 2;
        } finally {
            finished.countDown();
        }
    }

    /**
     * The savepoint the worker's epoch starts from, checked against its configuration, or null
     * for the job's first epoch.
     */
    static Savepoint readSavepoint(java.nio.file.Path file, JobConfig config) {
        if (file == null) {
            return null;
        }
        Savepoint savepoint;
        try {
            savepoint = Savepoint.decode(file, java.nio.file.Files.readString(file));
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("cannot read the savepoint " + file + ": " + e.getMessage(), e);
        }
        if (!savepoint.jobId().equals(config.jobId())) {
            throw new IllegalArgumentException("the savepoint " + file + " belongs to job '" + savepoint.jobId() + "', not '"
                    + config.jobId() + "'");
        }
        if (savepoint.toParallelism() != config.parallelism()) {
            throw new IllegalArgumentException("the savepoint " + file + " starts epoch " + savepoint.epoch() + " with "
                    + savepoint.toParallelism() + " workers, but the configuration has parallelism " + config.parallelism());
        }
        return savepoint;
    }

    /** {@code POST /barrier?epoch=N}: the engine stops at its next batch boundary and seals its checkpoint for epoch N. */
    private static WorkerHttpServer.BarrierAnswer requestBarrier(AtomicInteger barrier, int epoch, int requested) {
        if (requested != epoch + 1) {
            return new WorkerHttpServer.BarrierAnswer(409, "this worker runs epoch " + epoch + "; a barrier is for epoch "
                    + (epoch + 1) + " only");
        }
        int now = barrier.accumulateAndGet(requested, Math::max);
        if (now == requested) {
            LOG.log(Level.INFO, "barrier requested for epoch " + requested + ": stopping at the next batch boundary");
        }
        return new WorkerHttpServer.BarrierAnswer(202, "stopping at the next batch boundary for epoch " + now);
    }

    /** Runs the engine, again after each transient failure, and after permanent ones as {@code restart} says. */
    private static int runUntilDone(JobConfig config, WorkerOptions options, Savepoint savepoint, AtomicInteger barrier,
            ProgressTracker progress, AtomicBoolean stop) {
        Backoff transientPauses = new Backoff(FIRST_TRANSIENT_PAUSE_MS, MAX_TRANSIENT_PAUSE_MS);
        // A cap below the first pause (restart.maxBackoffMs may be 1 s) is every pause.
        long maxRestartPause = config.restart().maxBackoffMs();
        Backoff restartPauses = new Backoff(Math.min(FIRST_RESTART_PAUSE_MS, maxRestartPause), maxRestartPause);
        int barrierTried = savepoint == null ? 0 : savepoint.epoch();
        while (true) {
            long started = System.currentTimeMillis();
            try {
                MicroBatchEngine.Outcome outcome = runEngine(config, options, savepoint, barrier, progress, stop);
                LOG.log(Level.INFO, "worker finished: " + outcome);
                if (outcome == MicroBatchEngine.Outcome.AT_BARRIER) {
                    LOG.log(Level.INFO, "at the barrier; reporting the seal until replaced");
                    awaitUntil(stop::get);
                    return 0;
                }
                if (outcome == MicroBatchEngine.Outcome.COMPLETED && options.waitWhenDone()) {
                    LOG.log(Level.INFO, "drained; reporting COMPLETED until stopped (--when-done wait)");
                    int epoch = savepoint == null ? 0 : savepoint.epoch();
                    if (awaitBarrierAfter(epoch, barrier, stop)) {
                        continue; // a rescale's barrier: the engine starts again only to seal its checkpoint
                    }
                }
                return 0;
            } catch (CheckpointLockWait.LockWaitExpiredException e) {
                progress.state(EngineState.FAILED);
                progress.error(e.getMessage());
                LOG.log(Level.SEVERE, e.getMessage() + "; exiting to be restarted");
                return 3;
            } catch (RuntimeException e) {
                if (System.currentTimeMillis() - started > HEALTHY_RUN_MS) {
                    // A failure after a long healthy run starts the back-off afresh.
                    transientPauses.reset();
                    restartPauses.reset();
                }
                String cause = e.getMessage() == null ? e.toString() : e.getMessage();
                if (FailureKind.of(e) == FailureKind.TRANSIENT) {
                    progress.state(EngineState.RETRYING);
                    progress.error(cause);
                    long pauseMs = transientPauses.next();
                    LOG.log(Level.WARNING, "transient failure, starting again in " + pauseMs + " ms: " + cause,
                            e instanceof OncestreamException ? null : e);
                    if (!pause(pauseMs, stop)) {
                        return 0;
                    }
                    continue;
                }
                progress.state(EngineState.FAILED);
                // Permanent failures are OncestreamExceptions, which carry their explanation: no stack trace.
                LOG.log(Level.SEVERE, "job failed: " + cause);
                if (config.trigger().availableNow() && !options.waitWhenDone()) {
                    progress.error(cause);
                    return 1;
                }
                if (config.restart().onFailure() == RestartMode.BACKOFF) {
                    long pauseMs = restartPauses.next();
                    progress.error(cause + " (restart.onFailure: Backoff; starting again in " + pauseMs / 1000
                            + " s, at " + java.time.Instant.now().plusMillis(pauseMs) + ")");
                    if (!pause(pauseMs, stop)) {
                        return 1;
                    }
                    continue;
                }
                progress.error(cause);
                // Failed for good, unless a barrier is asked for that was not tried yet: then the
                // engine starts once more to reach it (with no open batch it seals at once).
                if (awaitBarrierAfter(barrierTried, barrier, stop)) {
                    barrierTried = barrier.get();
                    LOG.log(Level.INFO, "a barrier for epoch " + barrierTried + " was asked for: starting the engine again to reach it");
                    continue;
                }
                return 1;
            }
        }
    }

    /** Sleeps {@code ms} unless asked to stop first; false if asked. */
    private static boolean pause(long ms, AtomicBoolean stop) {
        try {
            Pause.sleep(ms, stop::get);
            return true;
        } catch (StopRequestedException e) {
            return false;
        }
    }

    private static MicroBatchEngine.Outcome runEngine(JobConfig config, WorkerOptions options, Savepoint savepoint,
            AtomicInteger barrier, ProgressTracker progress, AtomicBoolean stop) {
        EngineAssembly.Options production = EngineAssembly.Options.production()
                .withHooks(TestPauseHooks.fromEnvironment(System.getenv()))
                .withLockWait(options.lockWait())
                .withJobInstance(System.getenv("ONCESTREAM_JOB_UID"));
        // For tests only: a segment per entry, so that every checkpoint entry needs a new block
        // (CheckpointVolumeIT fills the volume before a commit; an append within a block's slack would not fail).
        String segmentEntries = System.getenv(TestPauseHooks.SEGMENT_ENTRIES_ENV);
        if (segmentEntries != null) {
            production = production.withSegmentEntries(Integer.parseInt(segmentEntries));
        }
        EngineAssembly engine;
        try {
            engine = EngineAssembly.connect(new EngineAssembly.Worker(config, options.workerIndex()), options.checkpoint(), savepoint,
                    new EngineAssembly.CassandraLogin(System.getenv("CASSANDRA_USERNAME"), System.getenv("CASSANDRA_PASSWORD")),
                    new EngineAssembly.Steering(progress, stop::get, barrier::get), production);
        } catch (StopRequestedException e) {
            progress.state(EngineState.STOPPED);
            return MicroBatchEngine.Outcome.STOPPED;
        } catch (EngineAssembly.Sealed e) {
            return MicroBatchEngine.Outcome.AT_BARRIER;
        }
        try (engine) {
            return engine.run();
        }
    }

    /**
     * Waits, its engine stopped, until a barrier for an epoch after {@code epoch} is asked for
     * (true) or a stop is (false; a stop wins when both are).
     */
    private static boolean awaitBarrierAfter(int epoch, AtomicInteger barrier, AtomicBoolean stop) {
        awaitUntil(() -> stop.get() || barrier.get() > epoch);
        return !stop.get();
    }

    /** Returns once {@code done} holds, looking every 200 ms. */
    private static void awaitUntil(BooleanSupplier done) {
        while (!done.getAsBoolean()) {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
