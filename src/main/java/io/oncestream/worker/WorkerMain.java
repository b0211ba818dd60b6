package io.oncestream.worker;

import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.oncestream.engine.EngineState;
import io.oncestream.engine.MicroBatchEngine;
import io.oncestream.engine.ProgressTracker;
import io.oncestream.engine.StopRequestedException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.config.JobConfigs;

/**
 * The worker process. Exit codes: 0 after {@code availableNow} drained; 143 after SIGTERM (the
 * JVM's signal exit, once the engine stopped at a safe point and closed its resources); 1 when
 * the job failed with {@code availableNow}; 2 for a bad command line or configuration.
 * A continuous job that fails stays up reporting {@code FAILED} (so it does not crash-loop)
 * until it is stopped; with {@code --when-done wait} (how the operator runs workers) so does
 * an {@code availableNow} job, drained ({@code COMPLETED}) or failed.
 */
public final class WorkerMain {

    static {
        WorkerLogging.install();
    }

    private static final Logger LOG = Logger.getLogger(WorkerMain.class.getName());

    private WorkerMain() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        WorkerOptions options;
        JobConfig config;
        try {
            options = WorkerOptions.parse(args, System.getenv());
            config = KafkaSecrets.apply(JobConfigs.read(options.config()), System.getenv());
            if (options.workerIndex() >= config.parallelism()) {
                throw new IllegalArgumentException("worker index " + options.workerIndex() + " is not below parallelism "
                        + config.parallelism());
            }
        } catch (RuntimeException e) {
            System.err.println("oncestream worker: " + e.getMessage());
            return 2;
        }
        ProgressTracker progress = new ProgressTracker(config.jobId(), options.workerIndex(), config.parallelism());
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
        try (WorkerHttpServer http = new WorkerHttpServer(options.httpHost(), options.httpPort(), progress::snapshot,
                () -> progress.state() != EngineState.FAILED && progress.state() != EngineState.STARTING)) {
            LOG.log(Level.INFO, "worker " + options.workerIndex() + " of job " + config.jobId()
                    + " serving http on " + options.httpHost() + ":" + http.port());
            try {
                MicroBatchEngine.Outcome outcome = runEngine(config, options, progress, stop);
                LOG.log(Level.INFO, "worker finished: " + outcome);
                if (outcome == MicroBatchEngine.Outcome.COMPLETED && options.waitWhenDone()) {
                    LOG.log(Level.INFO, "drained; reporting COMPLETED until stopped (--when-done wait)");
                    awaitStop(stop);
                }
                return 0;
            } catch (RuntimeException e) {
                progress.state(EngineState.FAILED);
                progress.error(e.getMessage());
                // Errors of ours carry their explanation; a stack trace helps only for the unexpected.
                boolean explained = e instanceof io.oncestream.engine.config.InvalidConfigException
                        || e instanceof io.oncestream.engine.checkpoint.CheckpointException
                        || e instanceof io.oncestream.engine.plan.PlanningException
                        || e instanceof io.oncestream.engine.BadRecordException
                        || e instanceof io.oncestream.engine.SinkException;
                LOG.log(Level.SEVERE, "job failed: " + e.getMessage(), explained ? null : e);
                if (config.trigger().availableNow() && !options.waitWhenDone()) {
                    return 1;
                }
                awaitStop(stop);
                return 1;
            }
        } catch (java.io.IOException e) {
            System.err.println("oncestream worker: cannot serve http on " + options.httpHost() + ":" + options.httpPort()
                    + ": " + e.getMessage());
            return 2;
        } finally {
            finished.countDown();
        }
    }

    private static MicroBatchEngine.Outcome runEngine(JobConfig config, WorkerOptions options, ProgressTracker progress,
            AtomicBoolean stop) {
        EngineAssembly.Options production = EngineAssembly.Options.production()
                .withHooks(TestPauseHooks.fromEnvironment(System.getenv(TestPauseHooks.ENV)));
        EngineAssembly engine;
        try {
            engine = EngineAssembly.connect(config, options.workerIndex(), options.checkpoint(), System.getenv("CASSANDRA_USERNAME"),
                    System.getenv("CASSANDRA_PASSWORD"), progress, stop::get, production);
        } catch (StopRequestedException e) {
            progress.state(EngineState.STOPPED);
            return MicroBatchEngine.Outcome.STOPPED;
        }
        try (engine) {
            return engine.run();
        }
    }

    private static void awaitStop(AtomicBoolean stop) {
        while (!stop.get()) {
            sleep(200);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
