package io.oncestream.bench.engine;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.management.ListenerNotFoundException;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

import com.sun.management.GarbageCollectionNotificationInfo;

/**
 * The benchmark JVM's garbage collections from a moment on while it is open, per collector: how
 * many, their total and longest duration.
 */
final class GcPauses implements AutoCloseable {

    private final Map<String, long[]> byCollector = new TreeMap<>(); // {count, total ms, max ms}
    private final List<Runnable> removals = new ArrayList<>();

    GcPauses(long fromEpochMs) {
        NotificationListener listener = (notification, handback) -> {
            if (GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())
                    && System.currentTimeMillis() >= fromEpochMs) {
                GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
                long ms = info.getGcInfo().getDuration();
                synchronized (byCollector) {
                    long[] s = byCollector.computeIfAbsent(info.getGcName(), n -> new long[3]);
                    s[0]++;
                    s[1] += ms;
                    s[2] = Math.max(s[2], ms);
                }
            }
        };
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter emitter) {
                emitter.addNotificationListener(listener, null, null);
                removals.add(() -> {
                    try {
                        emitter.removeNotificationListener(listener);
                    } catch (ListenerNotFoundException e) {
                        // already gone
                    }
                });
            }
        }
    }

    /** E.g. "G1 Young Generation: 12, 140 ms in all, longest 31 ms". */
    String summary() {
        synchronized (byCollector) {
            if (byCollector.isEmpty()) {
                return "none";
            }
            List<String> parts = new ArrayList<>();
            byCollector.forEach((name, s) -> parts.add(String.format("%s: %d, %d ms in all, longest %d ms", name, s[0], s[1], s[2])));
            return String.join("; ", parts);
        }
    }

    /**
     * The stop-the-world pauses another JVM logged with {@code -Xlog:gc=info:file=...:time,...}
     * between two moments, e.g. "12, 610 ms in all, longest 129 ms"; "no log" when there is none.
     */
    static String loggedPauses(Path gcLog, long fromEpochMs, long toEpochMs) throws IOException {
        if (gcLog == null || !Files.exists(gcLog)) {
            return "no log";
        }
        Pattern pause = Pattern.compile("^\\[(\\S+?)\\]\\[[^]]*\\] GC\\(\\d+\\) Pause .* ([\\d.]+)ms$");
        DateTimeFormatter time = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ");
        long count = 0;
        double total = 0;
        double longest = 0;
        try (Stream<String> lines = Files.lines(gcLog)) {
            for (String line : (Iterable<String>) lines::iterator) {
                Matcher m = pause.matcher(line);
                if (m.matches()) {
                    long at = OffsetDateTime.parse(m.group(1), time).toInstant().toEpochMilli();
                    if (at >= fromEpochMs && at <= toEpochMs) {
                        double ms = Double.parseDouble(m.group(2));
                        count++;
                        total += ms;
                        longest = Math.max(longest, ms);
                    }
                }
            }
        }
        return String.format("%d, %.0f ms in all, longest %.0f ms", count, total, longest);
    }

    @Override
    public void close() {
        removals.forEach(Runnable::run);
    }
}
