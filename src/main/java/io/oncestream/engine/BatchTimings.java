package io.oncestream.engine;

import java.util.LinkedHashMap;
import java.util.Map;

/** When each phase of a batch ended, by the engine's clock: the durations its progress and log line report. */
record BatchTimings(long started, long walDone, long readDone, long writeDone, long committed) {

    /** Planning (with the write-ahead), reading, writing, committing, and all of it, in ms. */
    Map<String, Long> durations() {
        Map<String, Long> durations = new LinkedHashMap<>();
        durations.put("planning", walDone - started);
        durations.put("reading", readDone - walDone);
        durations.put("writing", writeDone - readDone);
        durations.put("committing", committed - writeDone);
        durations.put("total", totalMs());
        return durations;
    }

    long totalMs() {
        return committed - started;
    }
}
