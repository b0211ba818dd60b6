package io.oncestream.engine.checkpoint;

import java.util.List;
import java.util.Optional;

/**
 * A log with one entry per batch id, each written once and never changed (Spark's
 * {@code MetadataLog}, plus durability). Ids need not be contiguous after a purge.
 *
 * @param <T> the entry type
 */
public interface BatchLog<T> {

    /** Adds the entry for {@code batchId}; returns false, changing nothing, if one exists. */
    boolean add(long batchId, T entry);

    /** The entry of {@code batchId}, if written. */
    Optional<T> get(long batchId);

    /** The entry with the highest batch id, if any. */
    Optional<Entry<T>> latest();

    /** All batch ids present, ascending. */
    List<Long> batchIds();

    /** Removes entries with ids below {@code batchId}. */
    void purgeBefore(long batchId);

    /** A batch id with its entry. */
    record Entry<T>(long batchId, T value) {
    }
}
