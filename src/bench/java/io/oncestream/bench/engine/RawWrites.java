package io.oncestream.bench.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Statement;

import io.oncestream.engine.cassandra.UnloggedBatches;
import io.oncestream.engine.config.JobConfig;

/**
 * The raw java-driver loader's write path: the engine's statement ({@code INSERT ... USING
 * TIMESTAMP ?}), bound with typed setters, rows of one Cassandra partition grouped into unlogged
 * batches the engine's way ({@link UnloggedBatches}, the job's batch limits), and the job's
 * writes in flight. The throughput mode's loader and the latency mode's at-least-once floor
 * ({@link AtLeastOnceFloor}) both write through it, so both baselines are the same writes.
 */
final class RawWrites {

    private final CqlSession session;
    private final PreparedStatement insert;
    /** Rows are grouped by order id on a wide table (one row per partition), by customer otherwise. */
    private final boolean wide;
    private final int inFlight;
    private final int maxBatchRows;
    private final int maxBatchPartitions;
    private final int maxBatchBytes;

    /** Prepares the insert into {@code keyspace.table} (a benchmark table, {@link BenchSetup#createTable}). */
    RawWrites(CqlSession session, String keyspace, String table, JobConfig.CassandraSink sink) {
        this.session = session;
        this.insert = session.prepare("INSERT INTO " + keyspace + "." + table
                + " (customer, order_id, amount, seq) VALUES (?, ?, ?, ?) USING TIMESTAMP ?");
        this.wide = table.startsWith("wide");
        this.inFlight = sink.maxInFlight();
        this.maxBatchRows = sink.maxBatchRows();
        this.maxBatchPartitions = sink.maxBatchPartitions();
        this.maxBatchBytes = sink.maxBatchBytes();
    }

    /**
     * Binds, groups and writes {@code orders} ({customer, order id, amount, seq} each, as
     * String, String, Double, Long), each write with the next of {@code timestamps}; returns once
     * every write is acknowledged, with the {@link System#nanoTime} of the last acknowledgement.
     * A failed write fails the call.
     */
    long write(List<Object[]> orders, LongSupplier timestamps) {
        Map<String, List<BoundStatement>> byPartition = new LinkedHashMap<>();
        for (Object[] o : orders) {
            // Rows that share a Cassandra partition share batches: the customer, or on the wide table the order itself.
            // Typed setters: the driver's cheapest way to bind (no codec look-up by value).
            byPartition.computeIfAbsent((String) (wide ? o[1] : o[0]), k -> new ArrayList<>()).add(insert.boundStatementBuilder()
                    .setString(0, (String) o[0]).setString(1, (String) o[1]).setDouble(2, (Double) o[2]).setLong(3, (Long) o[3])
                    .setLong(4, timestamps.getAsLong()).setIdempotence(true).build());
        }
        List<Statement<?>> statements = UnloggedBatches.group(byPartition, maxBatchRows, maxBatchPartitions, maxBatchBytes,
                UnloggedBatches.replicas(session));
        Semaphore permits = new Semaphore(inFlight);
        List<CompletableFuture<?>> futures = new ArrayList<>(statements.size());
        AtomicLong lastAck = new AtomicLong();
        for (Statement<?> s : statements) {
            permits.acquireUninterruptibly();
            futures.add(session.executeAsync(s).toCompletableFuture().whenComplete((r, e) -> {
                lastAck.accumulateAndGet(System.nanoTime(), Math::max);
                permits.release();
                if (e != null) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).join();
        return lastAck.get();
    }
}
