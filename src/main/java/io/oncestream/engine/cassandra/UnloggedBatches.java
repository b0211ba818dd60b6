package io.oncestream.engine.cassandra;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.DefaultBatchType;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.metadata.TokenMap;

/**
 * How a batch's writes become requests. Writes of one Cassandra partition share unlogged
 * batches of at most {@code maxRows} rows and {@link #PARTITION_BATCH_BYTES} bytes of values.
 * What is left of a partition after its full batches (on a table with one row per partition:
 * every row) shares a batch with other partitions whose replicas are the same nodes, up to
 * {@code maxPartitions} partitions, {@code maxRows} rows and {@code maxBatchBytes} bytes in all:
 * one request to a node that is a replica of every row in it, instead of one request per row.
 * The byte limits keep a request within what Cassandra accepts: a batch that spans partitions
 * is refused above {@code batch_size_fail_threshold} (50 KiB by default), however few its rows,
 * and any mutation above half of {@code commitlog_segment_size}; a write larger than a limit is
 * sent alone. An unlogged batch is not atomic and need not be: every write is an idempotent
 * upsert or delete with its own timestamp, so a batch retried whole, split, or applied in part
 * before a failure, ends the same as its writes one by one.
 */
public final class UnloggedBatches {

    /**
     * The most bytes of values in a batch of one partition's writes: far below the smallest
     * mutation limit a node is likely to have (half of a 32 MiB commit-log segment by default),
     * so that a batch of large rows is never refused as a whole when its rows alone would not be.
     */
    public static final int PARTITION_BATCH_BYTES = 1 << 20;

    private UnloggedBatches() {
    }

    /**
     * The requests for {@code byPartition} (the statements of each partition, in order).
     * {@code replicasOf} tells the replicas of a statement's partition, or null when they are not
     * known: such a partition's statements are sent alone.
     */
    public static List<Statement<?>> group(Map<?, List<BoundStatement>> byPartition, int maxRows, int maxPartitions,
            int maxBatchBytes, Function<BoundStatement, Object> replicasOf) {
        List<Statement<?>> out = new ArrayList<>();
        Map<Object, Shared> shared = new LinkedHashMap<>();
        for (List<BoundStatement> partition : byPartition.values()) {
            int start = 0;
            while (start < partition.size()) {
                long bytes = bytes(partition.get(start));
                int end = start + 1;
                while (end < partition.size() && end - start < maxRows) {
                    long next = bytes(partition.get(end));
                    if (bytes + next > PARTITION_BATCH_BYTES) {
                        break;
                    }
                    bytes += next;
                    end++;
                }
                List<BoundStatement> chunk = partition.subList(start, end);
                boolean rest = end == partition.size() && chunk.size() < maxRows;
                start = end;
                Object replicas = rest && maxPartitions > 1 && bytes <= maxBatchBytes ? replicasOf.apply(chunk.get(0)) : null;
                if (replicas == null) {
                    out.add(request(chunk));
                    continue;
                }
                Shared open = shared.computeIfAbsent(replicas, r -> new Shared());
                if (open.partitions == maxPartitions || open.statements.size() + chunk.size() > maxRows
                        || open.bytes + bytes > maxBatchBytes) {
                    out.add(request(open.statements));
                    open.statements = new ArrayList<>();
                    open.partitions = 0;
                    open.bytes = 0;
                }
                open.statements.addAll(chunk);
                open.partitions++;
                open.bytes += bytes;
            }
        }
        for (Shared open : shared.values()) {
            if (!open.statements.isEmpty()) {
                out.add(request(open.statements));
            }
        }
        return out;
    }

    /** The bytes of a statement's bound values: what Cassandra counts, give or take a few bytes a cell. */
    public static long bytes(BoundStatement statement) {
        long bytes = 0;
        for (ByteBuffer value : statement.getValues()) {
            if (value != null) {
                bytes += value.remaining();
            }
        }
        return bytes;
    }

    /**
     * The replicas of a statement's partition by the session's token map, as a value that is
     * equal for partitions with the same replicas; null without a token map (token metadata
     * off), a routing key or a routing keyspace (a prepared statement's is its table's).
     */
    public static Function<BoundStatement, Object> replicas(CqlSession session) {
        Optional<TokenMap> tokens = session.getMetadata().getTokenMap();
        if (tokens.isEmpty()) {
            return statement -> null;
        }
        TokenMap map = tokens.get();
        return statement -> {
            ByteBuffer key = statement.getRoutingKey();
            CqlIdentifier ks = statement.getRoutingKeyspace();
            if (key == null || ks == null) {
                return null;
            }
            var nodes = map.getReplicas(ks, key);
            return nodes.isEmpty() ? null : nodes;
        };
    }

    private static Statement<?> request(List<BoundStatement> statements) {
        if (statements.size() == 1) {
            return statements.get(0);
        }
        return BatchStatement.newInstance(DefaultBatchType.UNLOGGED).addAll(statements).setIdempotent(true);
    }

    private static final class Shared {
        List<BoundStatement> statements = new ArrayList<>();
        int partitions;
        long bytes;
    }
}
