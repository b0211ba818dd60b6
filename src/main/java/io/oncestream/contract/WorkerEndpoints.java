package io.oncestream.contract;

/**
 * Where a worker answers the operator (and Prometheus, and the kubelet's probes): its HTTP port
 * and paths, which the worker serves and the operator's pods, probes and polls name.
 */
public final class WorkerEndpoints {

    /** The port of the worker's HTTP endpoints (its {@code --http-port} unless told otherwise). */
    public static final int PORT = 8080;
    /** {@code GET}: the worker's {@link Progress}, as JSON. */
    public static final String PROGRESS = "/progress";
    /** {@code GET}: the worker's metrics in the Prometheus text format. */
    public static final String METRICS = "/metrics";
    /** {@code GET}: 200 while the process answers. */
    public static final String LIVE = "/healthz/live";
    /** {@code GET}: 200 while the engine runs and has not failed ({@link EngineState#working()}). */
    public static final String READY = "/healthz/ready";
    /** {@code POST /barrier?epoch=N}: stop at the next batch boundary and seal the checkpoint for epoch N. */
    public static final String BARRIER = "/barrier";
    /** The query parameter of {@link #BARRIER} that names the epoch. */
    public static final String EPOCH = "epoch";

    private WorkerEndpoints() {
    }

    /** The path and query that ask for the barrier of epoch {@code epoch}. */
    public static String barrier(int epoch) {
        return BARRIER + "?" + EPOCH + "=" + epoch;
    }
}
