package io.oncestream.bench.operator;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodIPBuilder;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;

import io.oncestream.api.StreamJob;
import io.oncestream.api.StreamJobResources;
import io.oncestream.api.StreamJobStatus;
import io.oncestream.api.TestManifests;
import io.oncestream.testing.AuditLog;
import io.oncestream.testing.Command;
import io.oncestream.testing.KubeCluster;
import io.oncestream.testing.LocalService;
import io.oncestream.testing.OperatorInstall;
import io.oncestream.testing.OperatorProcess;

/**
 * The packaged operator over N StreamJobs on a real control plane (API server, etcd,
 * controller-manager creating every worker pod; no node, so pods stay Pending and nothing is
 * polled). Prints, for one run: the time until every job is observed with its children and
 * pods, live heap after a full GC (and per job), CPU and reconciles at rest, the operator's
 * API requests at rest by verb and resource (from the audit log); with {@code --running K}, the
 * same with K idle workers answering (CPU per 1,000 of them, polls by result, and how fresh the
 * status is after a change), and a cold start: the
 * operator killed and started again over the N jobs, timed until every job was reconciled
 * once, with the writes it made.
 * <p>
 * Run by {@code deploy/local/operator-benchmark.sh}; never part of the test suite.
 */
public final class OperatorBenchmark {

    private static final String PREFIX = "[operator-bench] ";
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);
    /** What the operator logs once it has reconciled every job since its start. */
    private static final String CAUGHT_UP = "Caught up:";
    /** Rounds of {@code --cold-baseline}: each a cold start of either build. */
    private static final int COLD_ROUNDS = 3;
    /** The results of {@code oncestream_operator_progress_polls_total}. */
    private static final List<String> POLL_RESULTS = List.of("not_modified", "answered", "retried", "failed");
    private static final int SINGLE_CHANGES = 20;

    private final int jobs;
    private final int namespaces;
    private final int parallelism;
    private final int running;
    /** How many processes serve the running workers (deploy/local/operator-benchmark.sh decides, from the open-files limit). */
    private final int workerProcesses;
    private final Duration rest;
    private final Duration timeout;
    private final List<String> jvm;
    /** Where a flight recording of the operator over the rest window with running workers goes (null: none). */
    private final String profile;
    /** Where a flight recording of the operator over the burst of changes goes, until every change is shown (null: none). */
    private final String profileBurst;
    /** Where a flight recording of the restarted operator from its start until it caught up goes (null: none). */
    private final String profileCold;
    /** Another build's target/quarkus-app whose cold starts are measured alternating with this build's (null: none). */
    private final String coldBaseline;
    private final KubeCluster kube;
    private final KubernetesClient admin;
    private final List<String> report = new ArrayList<>();

    private OperatorBenchmark(Map<String, String> options) {
        this.jobs = Integer.parseInt(options.getOrDefault("jobs", "1000"));
        this.namespaces = Integer.parseInt(options.getOrDefault("namespaces", "10"));
        this.parallelism = Integer.parseInt(options.getOrDefault("parallelism", "1"));
        this.running = Integer.parseInt(options.getOrDefault("running", "0"));
        this.workerProcesses = Integer.parseInt(options.getOrDefault("worker-processes", "1"));
        this.rest = Duration.ofSeconds(Long.parseLong(options.getOrDefault("rest-seconds", "60")));
        this.timeout = Duration.ofSeconds(Long.parseLong(options.getOrDefault("timeout-seconds", "2400")));
        this.jvm = List.of(("-Xmx" + options.getOrDefault("heap", "3g") + " -XX:+UseG1GC").split(" "));
        this.profile = options.get("profile");
        this.profileBurst = options.get("profile-burst");
        this.profileCold = options.get("profile-cold");
        this.coldBaseline = options.get("cold-baseline");
        this.kube = KubeCluster.fromEnv(System.getenv());
        this.admin = kube.admin();
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new TreeMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 == args.length) {
                throw new IllegalArgumentException("usage: OperatorBenchmark --jobs N [--namespaces 10] [--parallelism 1]"
                        + " [--running K] [--worker-processes P] [--rest-seconds 60] [--heap 3g] [--timeout-seconds 2400] [--profile FILE.jfr] [--profile-burst FILE.jfr] [--profile-cold FILE.jfr] [--cold-baseline DIR]; got " + String.join(" ", args));
            }
            options.put(args[i].substring(2), args[++i]);
        }
        new OperatorBenchmark(options).run();
        System.exit(0);
    }

    private void run() throws Exception {
        say("%,d StreamJobs in %d namespaces, parallelism %d; operator JVM %s; %d CPUs", jobs, namespaces, parallelism,
                String.join(" ", jvm), Runtime.getRuntime().availableProcessors());
        OperatorInstall install = OperatorInstall.install(kube, "operator-bench");
        AuditLog audit = kube.auditLog();
        ChildCounts counts = new ChildCounts(admin);

        OperatorProcess first = start(install, "operator-1.log");
        first.awaitOutput("Started event processing for controller: streamjob", Duration.ofMinutes(3));
        double emptyHeap = liveHeapBytes(first);
        row("live heap, no StreamJobs", mb(emptyHeap));

        long createStart = System.nanoTime();
        create();
        double created = seconds(createStart);
        row("created through the API (16 concurrent requests)", String.format(Locale.ROOT, "%.1f s (%.0f/s)", created, jobs / created));

        awaitProgress("every job observed, its ConfigMap, Service and StatefulSet applied", createStart,
                () -> counts.observed() >= jobs && counts.children() >= 3L * jobs, counts::describe);
        double observed = seconds(createStart);
        row("every job observed with its children, from the first create", String.format(Locale.ROOT, "%.1f s", observed));
        awaitProgress("every worker pod created by the StatefulSet controller", createStart,
                () -> counts.pods() >= (long) jobs * parallelism, counts::describe);
        row("every worker pod created, from the first create", String.format(Locale.ROOT, "%.1f s", seconds(createStart)));
        awaitSettled(first, counts);

        long changesBefore = counts.changes();
        Rest atRest = measureRest(first, audit);
        long changed = counts.changes() - changesBefore;
        double heap = liveHeapBytes(first);
        row("live heap after a full GC, " + String.format(Locale.ROOT, "%,d", jobs) + " jobs and their pods", mb(heap));
        row("live heap per job (its pods included)", String.format(Locale.ROOT, "%.1f KB", (heap - emptyHeap) / jobs / 1024));
        row("resident set size", mb(rssBytes(first.pid())));
        heapByClass(first, jobs);
        atRest.report();
        row("at rest: StreamJobs, owned objects and pods changed by anyone", String.valueOf(changed));
        IdleWorkers workers = running > 0 ? new IdleWorkers(namespaces, workerProcesses,
                Path.of(System.getProperty("oncestream.repo.dir", "."), "target", "operator-bench")) : null;
        if (workers != null) {
            measureRunning(first, audit, counts, workers, atRest.cpu / atRest.seconds);
        }

        // Cold start: the operator stopped (SIGTERM, as a rolling update does: it hands the Lease
        // over instead of leaving it to expire) and started again over the same jobs.
        first.terminate(Duration.ofMinutes(1));
        long mark = audit.mark();
        long coldStart = System.nanoTime();
        List<String> coldJvm = new ArrayList<>(jvm);
        if (profileCold != null) {
            coldJvm.add("-XX:StartFlightRecording=name=cold,settings=default");
            say("recording the restarted operator from its start until it caught up (JFR; its cost is in the cold start's figures)");
        }
        OperatorProcess second = start(install, "operator-2.log", coldJvm);
        second.awaitOutput("Started event processing for controller: streamjob", timeout);
        double synced = seconds(coldStart);
        // The operator says when it has reconciled every job (CatchUp). Its log is what is
        // watched: a read of /q/metrics costs it about 0.1 s of CPU at 10,000 jobs, which read
        // twice a second would be in this figure. The gauge is read only for the progress lines.
        awaitProgress("every job reconciled once by the restarted operator", coldStart,
                () -> caughtUp(second),
                () -> String.format(Locale.ROOT, "%,.0f reconciled", metric(second, "oncestream_operator_streamjobs_reconciled")));
        double cold = seconds(coldStart);
        if (profileCold != null) {
            jcmd(second, Duration.ofMinutes(1), "JFR.stop", "name=cold", "filename=" + Path.of(profileCold).toAbsolutePath());
        }
        String caughtUp = second.log().lines().filter(l -> l.contains(CAUGHT_UP)).findFirst().orElseThrow();
        row("cold start: the operator's own account", caughtUp.substring(caughtUp.indexOf(CAUGHT_UP)));
        List<AuditLog.Request> writes = audit.since(mark, r -> r.user().equals(OperatorInstall.USER) && changes(r));
        row("cold start: process start to informers synced", String.format(Locale.ROOT, "%.1f s", synced));
        row("cold start: process start to every job reconciled once (the longest wait of any job)",
                String.format(Locale.ROOT, "%.1f s", cold));
        row("cold start: writes (other than the Lease)", writes.size() + (writes.isEmpty() ? "" : " " + byVerb(writes)));
        awaitSettled(second, counts);
        row("live heap after the cold start", mb(liveHeapBytes(second)));
        second.close();
        if (coldBaseline != null) {
            compareColdStarts(install);
        }
        counts.close();
        if (workers != null) {
            workers.close();
        }

        System.out.println();
        System.out.println("| " + String.format(Locale.ROOT, "%,d", jobs) + " StreamJobs | |");
        System.out.println("| --- | --- |");
        report.forEach(System.out::println);
    }

    private OperatorProcess start(OperatorInstall install, String log) {
        return start(install, log, jvm);
    }

    private OperatorProcess start(OperatorInstall install, String log, List<String> jvmOptions) {
        return start(install, LocalService.repoDir().resolve("target/quarkus-app"), log, jvmOptions);
    }

    private OperatorProcess start(OperatorInstall install, Path quarkusApp, String log, List<String> jvmOptions) {
        OperatorProcess operator = install.startMeasured(quarkusApp, log, jvmOptions, Map.of("quarkus.log.category.\"io.oncestream\".level", "WARN",
                "quarkus.log.category.\"io.oncestream.operator.CatchUp\".level", "INFO"));
        Runtime.getRuntime().addShutdownHook(new Thread(operator::close)); // an interrupted benchmark leaves no operator behind
        return operator;
    }

    private void create() throws Exception {
        for (int n = 0; n < namespaces; n++) {
            admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace(n)).endMetadata().build())
                    .serverSideApply();
        }
        StreamJob template = Serialization.unmarshal(TestManifests.streamJob("job", "ns", Map.of())
                + "  parallelism: " + parallelism + "\n", StreamJob.class);
        ExecutorService pool = Executors.newFixedThreadPool(16);
        AtomicInteger done = new AtomicInteger();
        long start = System.nanoTime();
        List<Future<?>> calls = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            int index = i;
            calls.add(pool.submit(() -> {
                StreamJob job = Serialization.clone(template);
                job.getMetadata().setName(jobName(index));
                job.getMetadata().setNamespace(namespace(index % namespaces));
                admin.resources(StreamJob.class).inNamespace(job.getMetadata().getNamespace()).resource(job).create();
                int count = done.incrementAndGet();
                if (count % Math.max(1, jobs / 10) == 0) {
                    say("created %,d of %,d StreamJobs (%.0f s)", count, jobs, seconds(start));
                }
            }));
        }
        for (Future<?> call : calls) {
            call.get();
        }
        pool.shutdown();
    }

    private static String namespace(int n) {
        return "bench-" + n;
    }

    /** Waits until {@code done}, printing {@code progress} every few seconds; fails after the timeout. */
    private void awaitProgress(String what, long since, BooleanSupplier done, Supplier<String> progress) throws InterruptedException {
        long last = System.nanoTime();
        while (!done.getAsBoolean()) {
            if (seconds(since) > timeout.toSeconds()) {
                throw new IllegalStateException("not done after " + timeout.toSeconds() + " s: " + what + "; " + progress.get());
            }
            if (System.nanoTime() - last > PROGRESS_EVERY.toNanos()) {
                say("waiting for %s: %s (%.0f s)", what, progress.get(), seconds(since));
                last = System.nanoTime();
            }
            Thread.sleep(500); // the poll interval of this wait, which reports progress as it goes
        }
        say("%s after %.1f s", what, seconds(since));
    }

    /**
     * Waits until nothing changed for 15 s: no status patch by the operator, and no StreamJob,
     * owned object or pod changed by anyone (the controller-manager creates pods and
     * claims at its own pace, and every such change reconciles a job). What the
     * operator does after that is "at rest".
     */
    private void awaitSettled(OperatorProcess operator, ChildCounts counts) throws InterruptedException {
        // The operator's counter is read at most every 15 s: with 10,000 jobs one read of
        // /q/metrics is 11 MB and about 5 s of the operator's CPU, and reading it every second
        // kept the operator too busy to settle.
        double patches = metric(operator, "oncestream_operator_status_patches_total");
        long stableSince = System.nanoTime();
        long patchesRead = stableSince;
        long start = System.nanoTime();
        long last = start;
        while (true) {
            Thread.sleep(1000); // sampling until nothing has changed for 15 s
            if (seconds(patchesRead) >= 15 || seconds(Math.max(stableSince, counts.lastChange())) >= 15) {
                double now = metric(operator, "oncestream_operator_status_patches_total");
                patchesRead = System.nanoTime();
                if (now != patches) {
                    patches = now;
                    stableSince = patchesRead;
                } else if (seconds(Math.max(stableSince, counts.lastChange())) >= 15) {
                    break;
                }
            }
            if (seconds(start) > timeout.toSeconds()) {
                throw new IllegalStateException("objects kept changing for " + timeout.toSeconds() + " s");
            }
            if (System.nanoTime() - last > PROGRESS_EVERY.toNanos()) {
                say("waiting until nothing changes for 15 s (%.0f s, %,.0f status patches so far)", seconds(start), patches);
                last = System.nanoTime();
            }
        }
        say("settled: no object changed for 15 s (%.0f s of waiting, %,.0f status patches in all)", seconds(start), patches);
    }

    /**
     * The first {@code running} jobs' worker pods marked Running, as a kubelet would, at
     * addresses 127.p.x.y where an HTTP server of this process, or of one it started, answers as
     * each worker ({@link IdleWorkers}: the same document until it is told to change); then the
     * rest window again, with those
     * workers watched (long-polls answered 304 while nothing changes), and how fresh the status
     * is after one worker's change and after a burst of changes.
     *
     * @param idleCpu the operator's CPU at rest without running workers (cores), which the
     *                per-worker figure leaves out
     */
    private void measureRunning(OperatorProcess operator, AuditLog audit, ChildCounts counts, IdleWorkers workers, double idleCpu)
            throws Exception {
        say("marking %,d worker pods Running at 127.1.x.y:%d%s", running, StreamJobResources.WORKER_HTTP_PORT, workerProcesses == 1 ? ""
                : String.format(Locale.ROOT, " to 127.%d.x.y (%d processes of idle workers)", workerProcesses, workerProcesses));
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<Future<?>> calls = new ArrayList<>();
        for (int i = 0; i < running; i++) {
            int index = i;
            calls.add(pool.submit(() -> {
                String ip = workers.address(index);
                admin.pods().inNamespace(namespace(index % namespaces)).withName(jobName(index) + "-0")
                        .editStatus(p -> new PodBuilder(p).editOrNewStatus().withPhase("Running").withPodIP(ip)
                                .withPodIPs(List.of(new PodIPBuilder().withIp(ip).build()))
                                .withConditions(new PodConditionBuilder().withType("Ready").withStatus("True").build())
                                .endStatus().build());
            }));
        }
        for (Future<?> call : calls) {
            call.get();
        }
        pool.shutdown();
        long since = System.nanoTime();
        awaitProgress("every running job's status Running", since,
                () -> counts.runningJobs() >= running, () -> String.format(Locale.ROOT, "%,d Running", counts.runningJobs()));
        awaitSettled(operator, counts);
        Map<String, Double> polls = pollsByResult(operator);
        long changesBefore = counts.changes();
        if (profile != null) {
            flightRecording(operator, profile);
        }
        Rest atRest = measureRest(operator, audit);
        Map<String, Double> pollsAfter = pollsByResult(operator);
        double polled = pollsAfter.values().stream().mapToDouble(Double::doubleValue).sum()
                - polls.values().stream().mapToDouble(Double::doubleValue).sum();
        String with = String.format(Locale.ROOT, "with %,d running workers: ", running);
        row("at rest " + with + "operator CPU", String.format(Locale.ROOT, "%.3f core", atRest.cpu / atRest.seconds));
        row("at rest " + with + "operator CPU per 1,000 running workers", String.format(Locale.ROOT,
                "%.4f core (over the %.3f core at rest without them)", (atRest.cpu / atRest.seconds - idleCpu) / running * 1000, idleCpu));
        row("at rest " + with + "progress polls", String.format(Locale.ROOT, "%.0f per second (%.2f per running job per poll interval of 5 s)",
                polled / atRest.seconds, polled / atRest.seconds * 5 / running));
        row("at rest " + with + "progress polls by result", POLL_RESULTS.stream().map(r -> String.format(Locale.ROOT, "%s %.1f/s", r,
                (pollsAfter.get(r) - polls.get(r)) / atRest.seconds)).collect(Collectors.joining(", ")));
        row("at rest " + with + "reconciles", String.format(Locale.ROOT, "%.0f in %.0f s", atRest.reconciles, atRest.seconds));
        row("at rest " + with + "writes other than the Lease",
                String.valueOf(atRest.requests.stream().filter(OperatorBenchmark::changes).count()));
        row("at rest " + with + "objects changed by anyone", String.valueOf(counts.changes() - changesBefore));
        measureFreshness(workers, operator);
    }

    /**
     * Time from a worker's change to its job's status showing it: {@value #SINGLE_CHANGES} single
     * changes at rest, one at a time at random moments; then 10 % of the running workers
     * changing at once.
     */
    private void measureFreshness(IdleWorkers workers, OperatorProcess operator) throws IOException, InterruptedException {
        java.util.Random random = new java.util.Random(42);
        try (Freshness freshness = new Freshness(admin)) {
            for (int i = 0; i < SINGLE_CHANGES; i++) {
                Thread.sleep(random.nextInt(5000)); // a random moment within a poll interval
                change(workers, freshness, random.nextInt(running));
                awaitShown(freshness);
            }
            row("freshness at rest, one worker changes", Freshness.describe(freshness.take()));
            int burst = Math.max(1, running / 10);
            List<Integer> indices = new ArrayList<>(java.util.stream.IntStream.range(0, running).boxed().toList());
            java.util.Collections.shuffle(indices, random);
            if (profileBurst != null) {
                jcmd(operator, Duration.ofMinutes(1), "JFR.start", "name=burst", "settings=default");
                say("recording the operator over the burst to %s (JFR; its cost is in the burst's figures)", profileBurst);
            }
            for (int index : indices.subList(0, burst)) {
                change(workers, freshness, index);
            }
            awaitShown(freshness);
            if (profileBurst != null) {
                jcmd(operator, Duration.ofMinutes(1), "JFR.stop", "name=burst", "filename=" + Path.of(profileBurst).toAbsolutePath());
            }
            row(String.format(Locale.ROOT, "freshness in a burst, %,d of %,d workers change at once", burst, running),
                    Freshness.describe(freshness.take()));
        }
    }

    private void change(IdleWorkers workers, Freshness freshness, int index) {
        freshness.expect(namespace(index % namespaces), jobName(index), workers.batch(index) + 1);
        workers.commit(index);
    }

    private void awaitShown(Freshness freshness) throws InterruptedException {
        long since = System.nanoTime();
        awaitProgress("the changed workers' batches in their jobs' status", since, () -> freshness.awaiting() == 0,
                () -> String.format(Locale.ROOT, "%,d not shown yet", freshness.awaiting()));
    }

    /** {@code oncestream_operator_progress_polls_total} of each result. */
    private static Map<String, Double> pollsByResult(OperatorProcess operator) {
        String page = metricsPage(operator);
        Map<String, Double> out = new TreeMap<>();
        for (String result : POLL_RESULTS) {
            out.put(result, page == null ? -1 : metric(page, "oncestream_operator_progress_polls_total", "result=\"" + result + "\""));
        }
        return out;
    }

    /** The id of job number {@code index} of a run over {@code namespaces} namespaces. */
    static String jobId(int index, int namespaces) {
        return StreamJobResources.jobId(namespace(index % namespaces), jobName(index));
    }

    private static String jobName(int index) {
        return String.format(Locale.ROOT, "job-%05d", index);
    }

    /** CPU, reconciles and API requests of the operator over the rest window. */
    private Rest measureRest(OperatorProcess operator, AuditLog audit) throws InterruptedException {
        say("measuring %d s at rest", rest.toSeconds());
        long mark = audit.mark();
        double reconciles = metric(operator, "oncestream_operator_reconciliations_total");
        double cpu = cpuSeconds(operator.pid());
        long start = System.nanoTime();
        Thread.sleep(rest.toMillis()); // the measuring window itself
        double elapsed = seconds(start);
        double cpuUsed = cpuSeconds(operator.pid()) - cpu;
        double reconciled = metric(operator, "oncestream_operator_reconciliations_total") - reconciles;
        List<AuditLog.Request> requests = audit.since(mark, r -> r.user().equals(OperatorInstall.USER));
        return new Rest(elapsed, cpuUsed, reconciled, requests);
    }

    private final class Rest {
        final double seconds;
        final double cpu;
        final double reconciles;
        final List<AuditLog.Request> requests;

        Rest(double seconds, double cpu, double reconciles, List<AuditLog.Request> requests) {
            this.seconds = seconds;
            this.cpu = cpu;
            this.reconciles = reconciles;
            this.requests = requests;
        }

        void report() {
            row("at rest: operator CPU", String.format(Locale.ROOT, "%.3f core (%.1f CPU-s per minute)", cpu / seconds, cpu / seconds * 60));
            row("at rest: reconciles", String.format(Locale.ROOT, "%.0f in %.0f s (%.3f per job per minute)", reconciles, seconds,
                    reconciles / jobs / seconds * 60));
            long writes = requests.stream().filter(OperatorBenchmark::changes).count();
            row("at rest: API requests", requests.size() + " " + byVerb(requests));
            row("at rest: writes other than the Lease", String.valueOf(writes));
        }
    }

    /** A write other than the Lease's renewal (a self-subject review, which the SDK makes at start, changes nothing). */
    private static boolean changes(AuditLog.Request r) {
        return r.isWrite() && r.resource() != null && !"leases".equals(r.resource()) && !r.resource().startsWith("selfsubject");
    }

    private static String byVerb(List<AuditLog.Request> requests) {
        return requests.stream().collect(Collectors.groupingBy(r -> r.verb() + " " + r.resource()
                + (r.subresource() == null ? "" : "/" + r.subresource()), TreeMap::new, Collectors.counting())).toString();
    }

    /**
     * Cold starts of another build ({@code --cold-baseline}, its target/quarkus-app) and of this
     * one, alternating ({@value #COLD_ROUNDS} rounds, the baseline first in the first round and
     * this build first in the next), each over the same jobs and workers: the time from the
     * process start until it logs that it caught up. The baseline must log that too (this build's
     * {@code CatchUp}, from 18a3e25 on).
     */
    private void compareColdStarts(OperatorInstall install) throws InterruptedException {
        Path self = LocalService.repoDir().resolve("target/quarkus-app");
        Map<String, List<Double>> times = new java.util.LinkedHashMap<>();
        times.put("baseline", new ArrayList<>());
        times.put("this build", new ArrayList<>());
        for (int round = 0; round < COLD_ROUNDS; round++) {
            List<String> order = round % 2 == 0 ? List.of("baseline", "this build") : List.of("this build", "baseline");
            for (String build : order) {
                Path app = build.equals("baseline") ? Path.of(coldBaseline) : self;
                long since = System.nanoTime();
                OperatorProcess operator = start(install, app, "operator-cold-" + round + "-" + build.replace(' ', '-') + ".log", jvm);
                awaitProgress("every job reconciled once by the restarted operator (" + build + ", round " + (round + 1) + ")", since,
                        () -> caughtUp(operator),
                        () -> String.format(Locale.ROOT, "%,.0f reconciled", metric(operator, "oncestream_operator_streamjobs_reconciled")));
                times.get(build).add(seconds(since));
                operator.terminate(Duration.ofMinutes(1));
            }
        }
        double baseline = median(times.get("baseline"));
        double current = median(times.get("this build"));
        times.forEach((build, seconds) -> row("cold start side by side: " + build + (build.equals("baseline") ? " (" + coldBaseline + ")" : ""),
                seconds.stream().map(s -> String.format(Locale.ROOT, "%.1f s", s)).collect(Collectors.joining(", "))
                        + String.format(Locale.ROOT, " (median %.1f s)", median(seconds))));
        row("cold start side by side: this build ÷ baseline (medians)", String.format(Locale.ROOT, "%.2f", current / baseline));
    }

    /** Whether the operator logged that it caught up; an operator that exited instead fails the run with its log's end. */
    private static boolean caughtUp(OperatorProcess operator) {
        if (operator.log().contains(CAUGHT_UP)) {
            return true;
        }
        if (!operator.isAlive()) {
            throw new IllegalStateException("the operator exited before it caught up\n" + operator.tail());
        }
        return false;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /**
     * Starts a flight recording (JFR, its default settings, about 1 % of a CPU) of the operator over the next rest
     * window, written to {@code file}: where its CPU at rest goes. The recording's own cost is in
     * that window's CPU figure, so a profiled run's figures are not the ones to record.
     */
    private void flightRecording(OperatorProcess operator, String file) throws IOException, InterruptedException {
        jcmd(operator, Duration.ofMinutes(1), "JFR.start", "name=rest", "settings=default", "duration=" + rest.toSeconds() + "s",
                "filename=" + Path.of(file).toAbsolutePath());
        say("recording the operator over the rest window to %s (JFR; its cost is in this window's CPU)", file);
    }

    /** Runs {@code jcmd <operator> args...} and returns what it printed, failing if it fails or takes longer than {@code timeout}. */
    private static String jcmd(OperatorProcess operator, Duration timeout, String... args) throws IOException, InterruptedException {
        Path jcmd = Path.of(ProcessHandle.current().info().command().orElseThrow()).resolveSibling("jcmd");
        List<String> command = new ArrayList<>(List.of(jcmd.toString(), String.valueOf(operator.pid())));
        command.addAll(List.of(args));
        return new Command(command).run(timeout).orThrow().stdout();
    }

    /** {@code jvm_gc_live_data_size_bytes} after a full GC requested with jcmd. */
    private static double liveHeapBytes(OperatorProcess operator) throws IOException, InterruptedException {
        jcmd(operator, Duration.ofMinutes(2), "GC.run");
        Thread.sleep(1000); // a fixed second after the collection before the gauge is read, as every recorded figure was measured
        return metric(operator, "jvm_gc_live_data_size_bytes");
    }

    /**
     * The classes that hold the most of the live heap ({@code jcmd GC.class_histogram}, itself
     * after a full GC), with bytes per job: where a change of the per-job figure comes from.
     */
    private void heapByClass(OperatorProcess operator, int jobs) throws IOException, InterruptedException {
        String histogram = jcmd(operator, Duration.ofMinutes(2), "GC.class_histogram");
        // Lines "   1:   123456   7890123  java.lang.String (java.base@17)": rank, instances, bytes, class.
        histogram.lines().map(String::trim).filter(l -> l.matches("\\d+:\\s+\\d+\\s+\\d+\\s+.*")).limit(15).forEach(l -> {
            String[] f = l.split("\\s+", 4);
            row("live heap by class: " + f[3], String.format(Locale.ROOT, "%,d instances, %s, %.0f bytes per job",
                    Long.parseLong(f[1]), mb(Double.parseDouble(f[2])), Double.parseDouble(f[2]) / jobs));
        });
    }

    private static double metric(OperatorProcess operator, String name) {
        return metric(operator, name, "");
    }

    /** The sum of the samples of {@code name} whose labels contain {@code label} (e.g. {@code result="failed"}). */
    private static double metric(OperatorProcess operator, String name, String label) {
        String page = metricsPage(operator);
        return page == null ? -1 : metric(page, name, label);
    }

    private static double metric(String page, String name, String label) {
        return page.lines().filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
                .filter(l -> label.isEmpty() || (l.indexOf('}') > 0 && l.substring(0, l.indexOf('}')).contains(label)))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    /** The operator's {@code /q/metrics} page (a read costs it about 5 s of CPU with 10,000 jobs); null if it did not answer. */
    private static String metricsPage(OperatorProcess operator) {
        try {
            return operator.get("/q/metrics").body();
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** User + system CPU of a process, from /proc (clock ticks of 10 ms). */
    private static double cpuSeconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / 100.0;
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the CPU time of process " + pid, e);
        }
    }

    private static double rssBytes(long pid) throws IOException {
        return Files.readAllLines(Path.of("/proc/" + pid + "/status")).stream().filter(l -> l.startsWith("VmRSS:"))
                .mapToDouble(l -> Double.parseDouble(l.replaceAll("[^0-9]", "")) * 1024).findFirst().orElse(-1);
    }

    private static String mb(double bytes) {
        return String.format(Locale.ROOT, "%.0f MB", bytes / 1024 / 1024);
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    private void row(String what, String value) {
        report.add("| " + what + " | " + value + " |");
        say("%s: %s", what, value);
    }

    private static void say(String format, Object... args) {
        System.out.println(PREFIX + String.format(Locale.ROOT, format, args));
    }

    /**
     * Counts from informers of this process (label-selected, keeping one boolean per object, not
     * the object): StreamJobs whose status observed their generation, children and worker pods.
     */
    private static final class ChildCounts implements AutoCloseable {
        private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
        private final CountingStore<StreamJob> jobs;
        private final CountingStore<StreamJob> running;
        private final CountingStore<?> configMaps;
        private final CountingStore<?> services;
        private final CountingStore<?> statefulSets;
        private final CountingStore<?> pods;

        ChildCounts(KubernetesClient admin) {
            jobs = inform(admin.resources(StreamJob.class).inAnyNamespace().runnableInformer(0),
                    j -> j.getStatus() != null && j.getStatus().observedGeneration != null
                            && j.getStatus().observedGeneration.equals(j.getMetadata().getGeneration()));
            running = inform(admin.resources(StreamJob.class).inAnyNamespace().runnableInformer(0),
                    j -> j.getStatus() != null && j.getStatus().phase == StreamJobStatus.Phase.Running);
            configMaps = inform(admin.configMaps().inAnyNamespace().withLabelSelector(StreamJobResources.MANAGED_SELECTOR)
                    .runnableInformer(0), c -> true);
            services = inform(admin.services().inAnyNamespace().withLabelSelector(StreamJobResources.MANAGED_SELECTOR)
                    .runnableInformer(0), s -> true);
            statefulSets = inform(admin.apps().statefulSets().inAnyNamespace()
                    .withLabelSelector(StreamJobResources.MANAGED_SELECTOR).runnableInformer(0), s -> true);
            pods = inform(admin.pods().inAnyNamespace().withLabelSelector(StreamJobResources.MANAGED_SELECTOR)
                    .runnableInformer(0), p -> true);
        }

        private <T extends io.fabric8.kubernetes.api.model.HasMetadata> CountingStore<T> inform(SharedIndexInformer<T> informer,
                java.util.function.Predicate<T> counted) {
            CountingStore<T> store = new CountingStore<>(counted);
            informer.itemStore(store);
            informer.run();
            informers.add(informer);
            return store;
        }

        long observed() {
            return jobs.counted();
        }

        long children() {
            return configMaps.counted() + services.counted() + statefulSets.counted();
        }

        long pods() {
            return pods.counted();
        }

        long runningJobs() {
            return running.counted();
        }

        /** Changes of the watched objects so far. */
        long changes() {
            return java.util.stream.Stream.of(jobs, configMaps, services, statefulSets, pods).mapToLong(CountingStore::changes).sum();
        }

        /** When any of the watched objects last changed. */
        long lastChange() {
            return java.util.stream.Stream.of(jobs, configMaps, services, statefulSets, pods).mapToLong(CountingStore::lastChange)
                    .max().orElseThrow();
        }

        String describe() {
            return String.format(Locale.ROOT, "%,d of %,d jobs observed; %,d ConfigMaps, %,d Services, %,d StatefulSets, %,d pods",
                    jobs.counted(), jobs.size(), configMaps.counted(), services.counted(), statefulSets.counted(), pods.counted());
        }

        @Override
        public void close() {
            informers.forEach(SharedIndexInformer::stop);
        }
    }
}
