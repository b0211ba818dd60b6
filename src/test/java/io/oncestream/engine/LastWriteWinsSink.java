package io.oncestream.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.oncestream.engine.transform.SourceRecord;

/**
 * A {@link RowSink} standing in for Cassandra in engine tests: a table of rows by primary key
 * and a dead-letter table by {@code topic-partition@offset}, where a write replaces a row only
 * if its timestamp is higher, as {@code USING TIMESTAMP} does. {@link #writeAll} applies the
 * writes in a shuffled order and acknowledges them a few at a time, so a crash from the
 * listener leaves some writes of a batch applied and others not. It keeps every timestamp each
 * record was written with, and any two different values written to one key with the same
 * timestamp (which Cassandra would settle by comparing values, not by order).
 */
final class LastWriteWinsSink implements RowSink {

    /** A row's columns and the timestamp of the write that put them there. */
    private record Cell(Map<String, Object> columns, long timestamp) {
    }

    private record Upsert(boolean deadLetter, String key, Map<String, Object> columns, long timestamp, String origin)
            implements Write {
    }

    private final String keyColumn;
    private final int ackEvery;
    private final Random shuffle;
    private final Map<String, Cell> rows = new TreeMap<>();
    private final Map<String, Cell> deadLetters = new TreeMap<>();
    private final Map<String, Set<Long>> timestampsByRecord = new TreeMap<>();
    private final List<String> ties = new ArrayList<>();
    private final List<Integer> sends = new ArrayList<>();
    /** Calls of {@link #writeAll} still to find the sink down (each reports it, then the sink is back). */
    private int outages;
    private Runnable duringOutage = () -> { };

    /** Rows are keyed by column {@code keyColumn}; writes are acknowledged {@code ackEvery} at a time. */
    LastWriteWinsSink(String keyColumn, int ackEvery, long seed) {
        this.keyColumn = keyColumn;
        this.ackEvery = ackEvery;
        this.shuffle = new Random(seed);
    }

    @Override
    public Write prepare(SourceRecord origin, Map<String, Object> columns, long timestampMicros) throws BadRowException {
        Object key = columns.get(keyColumn);
        if (key == null) {
            throw new BadRowException("primary key column " + keyColumn + " is null");
        }
        return new Upsert(false, key.toString(), new TreeMap<>(columns), timestampMicros, where(origin));
    }

    @Override
    public List<String> primaryKeyColumns() {
        return List.of(keyColumn);
    }

    /** A delete: a cell without columns, which wins over live data of the same timestamp, as in Cassandra. */
    @Override
    public Write prepareDelete(SourceRecord origin, Map<String, Object> key, long timestampMicros) throws BadRowException {
        Object k = key.get(keyColumn);
        if (k == null) {
            throw new BadRowException("primary key column " + keyColumn + " is null");
        }
        return new Upsert(false, k.toString(), null, timestampMicros, where(origin));
    }

    @Override
    public Write prepareDeadLetter(SourceRecord record, String error, long batchId, long timestampMicros) {
        return new Upsert(true, where(record), Map.of("error", error), timestampMicros, where(record));
    }

    /**
     * The next {@code calls} calls of {@link #writeAll} each find the sink down once before it
     * takes their writes; {@code during} runs while it is down.
     */
    void outages(int calls, Runnable during) {
        outages = calls;
        duringOutage = during;
    }

    /** The number of writes of each call of {@link #writeAll}, in order. */
    List<Integer> sends() {
        return List.copyOf(sends);
    }

    @Override
    public List<Refused> writeAll(List<Write> writes, SinkListener listener) {
        sends.add(writes.size());
        if (outages > 0) {
            outages--;
            listener.waitingForSink(new IllegalStateException("No node was available to execute the query"), writes.size());
            duringOutage.run();
            listener.sinkAvailable();
        }
        List<Write> order = new ArrayList<>(writes);
        Collections.shuffle(order, shuffle);
        int pending = 0;
        for (Write w : order) {
            apply((Upsert) w);
            if (++pending == ackEvery) {
                listener.acknowledged(pending);
                pending = 0;
            }
        }
        if (pending > 0) {
            listener.acknowledged(pending);
        }
        return List.of();
    }

    private void apply(Upsert u) {
        timestampsByRecord.computeIfAbsent(u.origin(), o -> new TreeSet<>()).add(u.timestamp());
        Map<String, Cell> table = u.deadLetter() ? deadLetters : rows;
        Cell now = table.get(u.key());
        if (now == null || u.timestamp() > now.timestamp()
                || u.timestamp() == now.timestamp() && u.columns() == null && now.columns() != null) {
            table.put(u.key(), new Cell(u.columns(), u.timestamp()));
        } else if (u.timestamp() == now.timestamp() && !java.util.Objects.equals(u.columns(), now.columns()) && now.columns() != null) {
            ties.add(u.key() + " at " + u.timestamp() + ": " + now.columns() + " and " + u.columns());
        }
    }

    /** The table: columns by primary key. */
    Map<String, Map<String, Object>> rows() {
        Map<String, Map<String, Object>> out = new TreeMap<>();
        rows.forEach((k, c) -> {
            if (c.columns() != null) {
                out.put(k, c.columns());
            }
        });
        return out;
    }

    /** Dead letters: error by {@code topic-partition@offset}. */
    Map<String, Object> deadLetters() {
        Map<String, Object> out = new TreeMap<>();
        deadLetters.forEach((k, c) -> out.put(k, c.columns().get("error")));
        return out;
    }

    /** Every timestamp each record ({@code topic-partition@offset}) was written with, over all attempts. */
    Map<String, Set<Long>> timestampsByRecord() {
        return timestampsByRecord;
    }

    /** The timestamp of the first write of a record, or null if it was never written. */
    Long timestampOf(String partitionKey, long offset) {
        Set<Long> all = timestampsByRecord.get(partitionKey + "@" + offset);
        return all == null ? null : all.iterator().next();
    }

    /** Different values written to one key with one timestamp. */
    List<String> ties() {
        return ties;
    }

    @Override
    public void close() {
    }

    private static String where(SourceRecord r) {
        return r.partitionKey() + "@" + r.offset();
    }
}
