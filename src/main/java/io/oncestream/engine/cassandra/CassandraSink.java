package io.oncestream.engine.cassandra;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.IdentityHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.type.codec.TypeCodec;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.metadata.schema.ColumnMetadata;
import com.datastax.oss.driver.api.core.metadata.schema.TableMetadata;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import com.datastax.oss.driver.api.core.servererrors.QueryValidationException;
import com.datastax.oss.driver.api.core.type.DataTypes;

import io.oncestream.contract.DeadLetterMode;
import io.oncestream.engine.BadRowException;
import io.oncestream.engine.Backoff;
import io.oncestream.engine.Pause;
import io.oncestream.engine.RowSink;
import io.oncestream.engine.SinkException;
import io.oncestream.engine.StopRequestedException;
import io.oncestream.engine.config.InvalidConfigException;
import io.oncestream.engine.config.JobConfig;
import io.oncestream.engine.transform.SourceRecord;

/**
 * Idempotent upserts into the job's table: {@code INSERT ... USING TIMESTAMP ?} with the
 * timestamp of {@link WriteTimestamps}. Writes share unlogged batches as {@link UnloggedBatches}
 * says (by partition, then by replicas); at most {@code maxInFlight} requests are in the air.
 * Transient failures are retried with backoff, forever. A batch Cassandra refuses as invalid
 * (too large, say) is split and its writes sent alone; a write refused alone for its size is
 * returned to the engine as the record's fault; any other refusal fails the batch.
 */
public final class CassandraSink implements RowSink {

    private static final Logger LOG = Logger.getLogger(CassandraSink.class.getName());
    /** The pauses between tries of failed writes (docs/worker.md, Failures: 0.2 s doubling to 5 s). */
    private static final long FIRST_BACKOFF_MS = 200;
    private static final long MAX_BACKOFF_MS = 5_000;

    private final CqlSession session;
    private final String tableName;
    private final List<ColumnMetadata> columns;
    private final boolean[] primaryKey;
    private final String[] names;
    private final int[] partitionIndexes;
    private final int[] deletePartitionIndexes;
    private final TypeCodec<Object>[] codecs;
    private final PreparedStatement insert;
    private final PreparedStatement delete;
    private final List<ColumnMetadata> primaryKeyColumns;
    private final PreparedStatement deadLetterInsert;
    private final int maxInFlight;
    private final int maxBatchRows;
    private final int maxBatchPartitions;
    private final int maxBatchBytes;
    private final String deadLetterTable;
    private final int deadLetterMaxValueBytes;
    private final BooleanSupplier stopRequested;

    /**
     * The job's table as {@link #open} checked and prepared it: its name as CQL, the mapped
     * columns in the job's order, its partition key (internal names, in order) and primary key,
     * and the statements of an upsert and a delete.
     */
    private record PreparedTable(String name, List<ColumnMetadata> columns, List<String> partitionKey,
            List<ColumnMetadata> primaryKey, PreparedStatement insert, PreparedStatement delete) {
    }

    /** @param deadLetterInsert null unless the job has a dead-letter table */
    private CassandraSink(CqlSession session, PreparedTable table, PreparedStatement deadLetterInsert, JobConfig config,
            BooleanSupplier stopRequested) {
        this.session = session;
        this.tableName = table.name();
        this.columns = table.columns();
        this.codecs = codecs(session, columns);
        this.primaryKey = new boolean[columns.size()];
        this.names = new String[columns.size()];
        for (int i = 0; i < columns.size(); i++) {
            primaryKey[i] = table.primaryKey().contains(columns.get(i));
            names[i] = columns.get(i).getName().asInternal();
        }
        // In the table's partition-key order, as a delete's key is built (every one is mapped: checked in open).
        this.partitionIndexes = table.partitionKey().stream().mapToInt(k -> Arrays.asList(names).indexOf(k)).toArray();
        this.deletePartitionIndexes = IntStream.range(0, table.partitionKey().size()).toArray();
        this.insert = table.insert();
        this.delete = table.delete();
        this.primaryKeyColumns = List.copyOf(table.primaryKey());
        this.deadLetterInsert = deadLetterInsert;
        this.maxInFlight = config.sink().maxInFlight();
        this.maxBatchRows = config.sink().maxBatchRows();
        this.maxBatchPartitions = config.sink().maxBatchPartitions();
        this.maxBatchBytes = config.sink().maxBatchBytes();
        this.deadLetterTable = config.sink().keyspace() + "." + config.deadLetter().table();
        this.deadLetterMaxValueBytes = config.deadLetter().maxValueBytes();
        this.stopRequested = stopRequested;
    }

    /**
     * Checks the job's columns against the table's metadata and prepares the statements.
     * Refuses, naming table and column, an unknown column, an unmapped primary-key column or a
     * counter table; creates the dead-letter table if the job uses one and it is missing.
     */
    public static CassandraSink open(CqlSession session, JobConfig config, BooleanSupplier stopRequested) {
        JobConfig.CassandraSink sink = config.sink();
        TableMetadata table = SinkTables.require(session, sink.keyspace(), sink.table(), "sink.table");
        String name = table.getKeyspace().asCql(true) + "." + table.getName().asCql(true);
        for (ColumnMetadata c : table.getColumns().values()) {
            if (c.getType().equals(DataTypes.COUNTER)) {
                throw new InvalidConfigException("sink.table", name + " has counter column " + c.getName().asCql(true)
                        + ": counter updates are not idempotent, so exactly-once cannot hold");
            }
        }
        List<ColumnMetadata> columns = new ArrayList<>();
        for (String column : sink.columns().keySet()) {
            ColumnMetadata c = table.getColumn(CqlIdentifier.fromCql(column)).orElseThrow(() ->
                    new InvalidConfigException("sink.columns." + column, "column " + column + " does not exist in " + name
                            + " (its columns: " + table.getColumns().keySet().stream().map(i -> i.asCql(true))
                            .collect(Collectors.joining(", ")) + ")"));
            columns.add(c);
        }
        for (ColumnMetadata key : table.getPrimaryKey()) {
            if (!columns.contains(key)) {
                throw new InvalidConfigException("sink.columns", "primary-key column " + key.getName().asCql(true) + " of "
                        + name + " has no expression");
            }
        }
        List<String> partitionKey = table.getPartitionKey().stream().map(c -> c.getName().asInternal()).toList();
        String insert = "INSERT INTO " + name + " ("
                + columns.stream().map(c -> c.getName().asCql(true)).collect(Collectors.joining(", "))
                + ") VALUES (" + columns.stream().map(c -> "?").collect(Collectors.joining(", ")) + ") USING TIMESTAMP ?";
        // A tombstone's delete carries the record's write timestamp, like an upsert: a replay of
        // it changes nothing, and an upsert of the key with a later timestamp wins over it.
        String delete = "DELETE FROM " + name + " USING TIMESTAMP ? WHERE " + table.getPrimaryKey().stream()
                .map(c -> c.getName().asCql(true) + " = ?").collect(Collectors.joining(" AND "));
        PreparedStatement deadLetter = null;
        if (config.deadLetter().mode() == DeadLetterMode.TABLE) {
            deadLetter = session.prepare(SinkTables.deadLetterInsert(session, sink.keyspace(), config.deadLetter().table()));
        }
        PreparedTable prepared = new PreparedTable(name, columns, partitionKey, table.getPrimaryKey(), session.prepare(insert),
                session.prepare(delete));
        return new CassandraSink(session, prepared, deadLetter, config, stopRequested);
    }

    @Override
    public Write prepare(SourceRecord origin, Map<String, Object> values, long timestampMicros) throws BadRowException {
        Object[] bound = new Object[columns.size()];
        for (int i = 0; i < columns.size(); i++) {
            ColumnMetadata c = columns.get(i);
            bound[i] = columnValue(c, values.get(names[i]), primaryKey[i]);
        }
        // Codecs were resolved once per column (ColumnValues yields each column's default Java type),
        // which spares the driver a registry look-up per value.
        BoundStatementBuilder builder = insert.boundStatementBuilder();
        for (int i = 0; i < bound.length; i++) {
            if (bound[i] == null) {
                builder.setToNull(i);
            } else {
                builder.set(i, bound[i], codecs[i]);
            }
        }
        builder.setLong(columns.size(), timestampMicros);
        return new CassandraWrite(builder.setIdempotence(true).build(), partitionOf(bound, partitionIndexes), origin,
                timestampMicros, false);
    }

    /**
     * What groups writes into one unlogged batch: the partition-key value at {@code indexes} of
     * {@code values}, or the list of them (never null: key columns are checked). Dead letters
     * group by a type of their own.
     */
    private static Object partitionOf(Object[] values, int[] indexes) {
        if (indexes.length == 1) {
            return values[indexes[0]];
        }
        Object[] key = new Object[indexes.length];
        for (int i = 0; i < key.length; i++) {
            key[i] = values[indexes[i]];
        }
        return Arrays.asList(key);
    }

    /** A mapped value as column {@code c}'s Java type; a bad row if it does not fit, or is a null key. */
    private static Object columnValue(ColumnMetadata c, Object mapped, boolean key) throws BadRowException {
        String column = c.getName().asInternal();
        Object value;
        try {
            value = ColumnValues.convert(mapped, c.getType());
        } catch (IllegalArgumentException e) {
            throw new BadRowException("sink.columns." + column + ": " + e.getMessage());
        }
        if (value == null && key) {
            throw new BadRowException("sink.columns." + column + ": primary-key column is null");
        }
        return value;
    }

    @Override
    public List<String> primaryKeyColumns() {
        return primaryKeyColumns.stream().map(c -> c.getName().asInternal()).toList();
    }

    @Override
    public Write prepareDelete(SourceRecord origin, Map<String, Object> values, long timestampMicros) throws BadRowException {
        BoundStatementBuilder builder = delete.boundStatementBuilder().setLong(0, timestampMicros);
        Object[] key = new Object[primaryKeyColumns.size()];
        for (int i = 0; i < key.length; i++) {
            ColumnMetadata c = primaryKeyColumns.get(i);
            key[i] = columnValue(c, values.get(c.getName().asInternal()), true);
            builder.set(i + 1, key[i], session.getContext().getCodecRegistry().codecFor(c.getType()));
        }
        // The primary key starts with the partition key, in its order: the same grouping as an upsert's.
        return new CassandraWrite(builder.setIdempotence(true).build(), partitionOf(key, deletePartitionIndexes), origin,
                timestampMicros, false);
    }

    @SuppressWarnings("unchecked")
    private static TypeCodec<Object>[] codecs(CqlSession session, List<ColumnMetadata> columns) {
        TypeCodec<Object>[] codecs = new TypeCodec[columns.size()];
        for (int i = 0; i < columns.size(); i++) {
            codecs[i] = session.getContext().getCodecRegistry().codecFor(columns.get(i).getType());
        }
        return codecs;
    }

    @Override
    public Write prepareDeadLetter(SourceRecord r, String error, long batchId, long timestampMicros) {
        if (deadLetterInsert == null) {
            throw new IllegalStateException("the job has no dead-letter table");
        }
        // The raw key and value are kept up to a limit, so that a dead letter fits whatever the record's size.
        String cut = cutNote("record_key", r.key()) + cutNote("record_value", r.value());
        BoundStatement statement = deadLetterInsert.bind(r.topic(), r.partition(), r.offset(), head(r.key()), head(r.value()),
                Instant.ofEpochMilli(r.timestampMs()), error + cut, batchId, timestampMicros).setIdempotent(true);
        return new CassandraWrite(statement, new DeadLetterPartition(r.topic(), r.partition()), r, timestampMicros, true);
    }

    private ByteBuffer head(byte[] raw) {
        return raw == null ? null : ByteBuffer.wrap(raw, 0, Math.min(raw.length, deadLetterMaxValueBytes)).slice();
    }

    private String cutNote(String column, byte[] raw) {
        return raw == null || raw.length <= deadLetterMaxValueBytes ? ""
                : " [" + column + " cut to its first " + deadLetterMaxValueBytes + " of " + raw.length + " bytes]";
    }

    @Override
    public List<Refused> writeAll(List<Write> writes, SinkListener listener) {
        List<Statement<?>> pending = group(writes);
        List<Refused> refused = new ArrayList<>();
        Map<Statement<?>, CassandraWrite> byStatement = null;
        Backoff backoff = new Backoff(FIRST_BACKOFF_MS, MAX_BACKOFF_MS);
        boolean waited = false;
        while (!pending.isEmpty()) {
            ConcurrentLinkedQueue<Statement<?>> failed = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<Statement<?>> split = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<Map.Entry<Statement<?>, Throwable>> invalid = new ConcurrentLinkedQueue<>();
            AtomicReference<Throwable> splitCause = new AtomicReference<>();
            AtomicReference<Throwable> lastTransient = new AtomicReference<>();
            Semaphore inFlight = new Semaphore(maxInFlight);
            List<CompletableFuture<?>> futures = new ArrayList<>(pending.size());
            for (Statement<?> statement : pending) {
                if (stopRequested.getAsBoolean()) {
                    throw new StopRequestedException();
                }
                inFlight.acquireUninterruptibly();
                futures.add(session.executeAsync(statement).toCompletableFuture().whenComplete((rs, error) -> {
                    inFlight.release();
                    Throwable cause = unwrap(error);
                    if (error == null) {
                        listener.acknowledged(size(statement));
                    } else if (cause instanceof QueryValidationException && statement instanceof BatchStatement batch
                            && batch.size() > 1) {
                        // "Batch too large" and the like: its writes alone may well be accepted; any
                        // other refusal then names the one write and its record.
                        batch.forEach(split::add);
                        splitCause.compareAndSet(null, cause);
                    } else if (cause instanceof QueryValidationException) {
                        invalid.add(Map.entry(statement, cause));
                    } else {
                        lastTransient.set(error);
                        failed.add(statement);
                    }
                }));
            }
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
            if (!invalid.isEmpty()) {
                if (byStatement == null) {
                    byStatement = new IdentityHashMap<>();
                    for (Write w : writes) {
                        byStatement.put(((CassandraWrite) w).statement(), (CassandraWrite) w);
                    }
                }
                for (Map.Entry<Statement<?>, Throwable> e : invalid) {
                    refused.add(refusedAlone(byStatement.get(e.getKey()), e.getKey(), e.getValue()));
                }
            }
            if (!split.isEmpty()) {
                LOG.log(Level.WARNING, "Cassandra refused " + split.size() + " writes as batches (" + splitCause.get().getMessage()
                        + "); sending them alone");
            }
            pending = new ArrayList<>(split);
            if (!failed.isEmpty()) {
                pending.addAll(failed);
                listener.waitingForSink(lastTransient.get(), failed.size());
                waited = true;
                Pause.sleep(backoff.next(), stopRequested);
            } else if (waited) {
                listener.sinkAvailable();
                waited = false;
            }
        }
        return refused;
    }

    /**
     * A write Cassandra refused alone: the record's fault when it is its size, otherwise a
     * {@link SinkException} naming the table and the record, for a retry cannot help.
     */
    private Refused refusedAlone(CassandraWrite write, Statement<?> statement, Throwable cause) {
        String table = write == null || !write.deadLetter() ? tableName : deadLetterTable;
        long bytes = statement instanceof BoundStatement bound ? UnloggedBatches.bytes(bound) : -1;
        String what = write == null ? "" : " (the " + (write.deadLetter() ? "dead letter" : "row") + " of record "
                + write.origin().partitionKey() + " offset " + write.origin().offset() + ", " + bytes + " bytes)";
        if (write == null || !(cause instanceof InvalidQueryException) || !isTooLarge(cause)) {
            throw new SinkException("Cassandra refused a write to " + table + what + ": " + cause.getMessage(), cause);
        }
        return new Refused(write.origin(), write.timestampMicros(), bytes,
                "Cassandra refused the row (" + bytes + " bytes) even alone: " + cause.getMessage(), write.deadLetter());
    }

    /**
     * Cassandra's words for a write over one of its size limits: a CQL message ("... exceeds
     * allowed maximum"), a mutation ("Rejected an oversized mutation"), a key ("Key length of N is
     * longer than maximum of 65535"), a guardrail ("... exceeds the failure threshold").
     */
    private static boolean isTooLarge(Throwable cause) {
        String message = String.valueOf(cause.getMessage()).toLowerCase(java.util.Locale.ROOT);
        return message.contains("oversized mutation") || message.contains("too large") || message.contains("exceeds")
                || message.contains("longer than maximum") || message.contains("too long");
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    /** The writes as requests: {@link UnloggedBatches}, with the token map of now. */
    private List<Statement<?>> group(List<Write> writes) {
        Map<Object, List<BoundStatement>> byPartition = new LinkedHashMap<>();
        for (Write w : writes) {
            CassandraWrite cw = (CassandraWrite) w;
            byPartition.computeIfAbsent(cw.partition(), k -> new ArrayList<>()).add(cw.statement());
        }
        return UnloggedBatches.group(byPartition, maxBatchRows, maxBatchPartitions, maxBatchBytes,
                UnloggedBatches.replicas(session));
    }

    private static int size(Statement<?> statement) {
        return statement instanceof BatchStatement batch ? batch.size() : 1;
    }

    @Override
    public void close() {
        // The session belongs to the caller.
    }

    private record CassandraWrite(BoundStatement statement, Object partition, SourceRecord origin, long timestampMicros,
            boolean deadLetter) implements Write {
    }

    private record DeadLetterPartition(String topic, int partition) {
    }
}
