package io.oncestream.contract;

/**
 * Where a worker answers the operator (and Prometheus, and the kubelet's probes): its HTTP port
 * and paths, which the worker serves and the operator's pods, probes and polls name.
 */
public final class WorkerEndpoints {

    /** The port of the worker's HTTP endpoints (its {@code --http-port} unless told otherwise). */
    public static final int PORT = 8080;
    /**
     * {@code GET}: the worker's {@link Progress}, as JSON, with an {@code ETag} that changes when
     * the document does; {@code If-None-Match} with the current one is answered 304 without a body,
     * and with {@link #WAIT} too, once the document changed or the wait ended (a long-poll).
     */
    public static final String PROGRESS = "/progress";
    /**
     * The query parameter of a conditional {@link #PROGRESS} that holds the request until the
     * document changes: seconds, at most {@link #MAX_WAIT_SECONDS}. A worker that predates it
     * ignores it and answers at once.
     */
    public static final String WAIT = "wait";
    /** The longest a worker holds a {@link #WAIT} request; a longer wait is cut to it. */
    public static final int MAX_WAIT_SECONDS = 60;
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

    /** The path and query of a long-poll of {@link #PROGRESS} that waits up to {@code seconds}. */
    public static String progressWait(long seconds) {
        return PROGRESS + "?" + WAIT + "=" + seconds;
    }

    /** The path and query that ask for the barrier of epoch {@code epoch}. */
    public static String barrier(int epoch) {
        return BARRIER + "?" + EPOCH + "=" + epoch;
    }
}
