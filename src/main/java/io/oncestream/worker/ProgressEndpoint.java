package io.oncestream.worker;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;

import io.oncestream.contract.Progress;
import io.oncestream.contract.WorkerEndpoints;

/**
 * {@code GET /progress}, answered so that a worker whose progress does not change costs the
 * operator next to nothing. Every answer carries an {@code ETag} {@code "<instance>-<version>"}:
 * the instance is drawn at each start (a restarted worker never repeats an old tag), the version
 * goes up when the document changes. {@code If-None-Match} with the current tag is answered 304
 * without a body; with {@code ?wait=N} as well, the request is held until the document changes
 * (200 with it) or N seconds pass (304): a long-poll, so the operator asks an idle worker once a
 * wait instead of once a poll interval. A GET without {@code If-None-Match} is answered with the
 * document as it always was, so an operator that predates this reads what it always read.
 * <p>
 * The version follows the document without {@code updatedAt} and {@code lag.observedAt}: the
 * first is the time of each read, the second of each lag probe (every few seconds), and neither
 * means anything else changed; the operator compares neither (its {@code WorkerProgress}). Every
 * other field counts, the lag's {@code ageMs} and the rates too: they move while the job has
 * work and stay still while it is idle, which is when answering 304 saves something.
 * <p>
 * A held request does not keep one of the server's two threads: the handler returns, and a timer
 * answers it, looking for a change once every {@link #CHECK_EVERY} while any request is held
 * and ending each wait on time. At most {@link #MAX_HELD} are held at once (the operator holds
 * one; more means something else asks too): beyond that, a conditional GET is answered at once.
 */
public final class ProgressEndpoint implements HttpHandler, AutoCloseable {

    static final int MAX_HELD = 8;
    static final Duration CHECK_EVERY = Duration.ofSeconds(1);

    private static final Logger LOG = Logger.getLogger(ProgressEndpoint.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final ObjectMapper TREE = new ObjectMapper();

    /** The document as read now, and the tag of its version. */
    private record Current(Progress document, String etag) {
    }

    /** A request waiting for a change of the version it named, and the task that ends its wait. */
    private record Held(HttpExchange exchange, String etag, ScheduledFuture<?> expiry) {
    }

    private final Supplier<Progress> progress;
    private final ScheduledExecutorService timer;
    private final boolean ownTimer;
    private final String instance = Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    /** The document read last and what the version was counted on; guarded by {@code this}. */
    private Progress lastDocument;
    private JsonNode lastKey;
    private long version;
    /** Guarded by itself, as are {@link #checks} and {@link #closed}. */
    private final List<Held> held = new ArrayList<>();
    private ScheduledFuture<?> checks;
    private boolean closed;

    /** Answers with the document {@code progress} reads, with a timer thread of its own for held requests. */
    public ProgressEndpoint(Supplier<Progress> progress) {
        this(progress, Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "worker-progress-wait");
            t.setDaemon(true);
            return t;
        }), true);
    }

    /**
     * Answers with the document {@code progress} reads; held requests are answered on {@code timer},
     * which the caller owns (many endpoints in one process, a benchmark's fake workers, share one).
     */
    public ProgressEndpoint(Supplier<Progress> progress, ScheduledExecutorService timer) {
        this(progress, timer, false);
    }

    private ProgressEndpoint(Supplier<Progress> progress, ScheduledExecutorService timer, boolean ownTimer) {
        this.progress = progress;
        this.timer = timer;
        this.ownTimer = ownTimer;
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            try (exchange) {
                exchange.sendResponseHeaders(405, -1);
            }
            return;
        }
        Current now = current();
        String asked = exchange.getRequestHeaders().getFirst("If-None-Match");
        if (asked == null || !matches(asked, now.etag())) {
            answer(exchange, now);
        } else if (!hold(exchange, now.etag(), waitSeconds(exchange.getRequestURI().getRawQuery()))) {
            notModified(exchange, now.etag());
        }
    }

    /** Requests held now, for tests. */
    int held() {
        synchronized (held) {
            return held.size();
        }
    }

    /** The document now and its version's tag, counting a new version if it changed since last read. */
    private synchronized Current current() {
        Progress document = progress.get();
        if (!document.equals(lastDocument)) { // the same record (a supplier that keeps one) needs no comparing by content
            JsonNode key = versioned(document);
            if (!key.equals(lastKey)) {
                lastKey = key;
                version++;
            }
            lastDocument = document;
        }
        return new Current(document, "\"" + instance + "-" + version + "\"");
    }

    /** What the version is counted on: the document without the times of this read and of the lag probe. */
    static JsonNode versioned(Progress document) {
        ObjectNode tree = TREE.valueToTree(document);
        tree.remove("updatedAt");
        if (tree.get("lag") instanceof ObjectNode lag) {
            lag.remove("observedAt");
        }
        return tree;
    }

    /** Whether an {@code If-None-Match} header names {@code etag}: one of its tags, weak or strong, or {@code *}. */
    static boolean matches(String header, String etag) {
        for (String tag : header.split(",")) {
            String t = tag.strip();
            if (t.equals("*") || t.equals(etag) || t.equals("W/" + etag)) {
                return true;
            }
        }
        return false;
    }

    /** The {@code wait} of a query, in whole seconds and at most the maximum; 0 (answer at once) if absent or unreadable. */
    static int waitSeconds(String query) {
        if (query == null) {
            return 0;
        }
        String prefix = WorkerEndpoints.WAIT + "=";
        for (String param : query.split("&")) {
            if (param.startsWith(prefix) && param.substring(prefix.length()).matches("[0-9]{1,9}")) {
                return Math.min(Integer.parseInt(param.substring(prefix.length())), WorkerEndpoints.MAX_WAIT_SECONDS);
            }
        }
        return 0;
    }

    /** Holds {@code exchange} until the version is no longer {@code etag} or the wait ends; false if it is answered now. */
    private boolean hold(HttpExchange exchange, String etag, int waitSeconds) {
        if (waitSeconds <= 0) {
            return false;
        }
        synchronized (held) {
            if (closed || held.size() >= MAX_HELD) {
                return false;
            }
            ScheduledFuture<?> expiry = timer.schedule(() -> expire(exchange), waitSeconds, TimeUnit.SECONDS);
            held.add(new Held(exchange, etag, expiry));
            if (checks == null) {
                checks = timer.scheduleWithFixedDelay(this::check, CHECK_EVERY.toMillis(), CHECK_EVERY.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        return true;
    }

    /** Answers the held requests whose version changed with the document. */
    private void check() {
        try {
            Current now = current();
            List<Held> changed = new ArrayList<>();
            synchronized (held) {
                for (Iterator<Held> it = held.iterator(); it.hasNext();) {
                    Held h = it.next();
                    if (!h.etag().equals(now.etag())) {
                        changed.add(h);
                        it.remove();
                    }
                }
                stopChecksIfNoneHeld();
            }
            for (Held h : changed) {
                h.expiry().cancel(false);
                quietly(h.exchange(), () -> answer(h.exchange(), now));
            }
        } catch (RuntimeException e) {
            // Thrown out of a periodic task it would end the checks for good: held requests still end with their wait.
            LOG.log(Level.WARNING, "checking whether the progress changed failed; the next check tries again", e);
        }
    }

    /** The wait of a held request ended without a change: 304. */
    private void expire(HttpExchange exchange) {
        Held ended = null;
        synchronized (held) {
            for (Iterator<Held> it = held.iterator(); it.hasNext();) {
                Held h = it.next();
                if (h.exchange() == exchange) {
                    ended = h;
                    it.remove();
                    break;
                }
            }
            stopChecksIfNoneHeld();
        }
        if (ended != null) {
            String etag = ended.etag();
            quietly(exchange, () -> notModified(exchange, etag));
        }
    }

    private void stopChecksIfNoneHeld() {
        if (held.isEmpty() && checks != null) {
            checks.cancel(false);
            checks = null;
        }
    }

    private static void answer(HttpExchange exchange, Current now) throws IOException {
        try (exchange) {
            byte[] bytes = JSON.writeValueAsString(now.document()).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.getResponseHeaders().set("ETag", now.etag());
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    private static void notModified(HttpExchange exchange, String etag) throws IOException {
        try (exchange) {
            exchange.getResponseHeaders().set("ETag", etag);
            exchange.sendResponseHeaders(304, -1);
        }
    }

    private interface Answer {
        void send() throws IOException;
    }

    /** Sends an answer off the server's threads: a poller that went away meanwhile is no error. */
    private static void quietly(HttpExchange exchange, Answer answer) {
        try {
            answer.send();
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.FINE, "a held progress request could not be answered (its poller went away?)", e);
            exchange.close();
        }
    }

    /** Answers every held request with 304 (its poller asks again and finds the server gone) and stops the timer if owned. */
    @Override
    public void close() {
        List<Held> ending;
        synchronized (held) {
            closed = true;
            ending = new ArrayList<>(held);
            held.clear();
            stopChecksIfNoneHeld();
        }
        for (Held h : ending) {
            h.expiry().cancel(false);
            quietly(h.exchange(), () -> notModified(h.exchange(), h.etag()));
        }
        if (ownTimer) {
            timer.shutdownNow();
        }
    }
}
