package io.oncestream.engine;

/**
 * How far the job is behind its source in one partition, as a lag probe read it.
 *
 * @param committed      the job's next offset to apply (exact if {@code exact}, else its consumer-group offset)
 * @param latest         the last stable offset
 * @param oldestRecordMs timestamp of the record at {@code committed} (the oldest not applied), null
 *                       when nothing is behind or it could not be read
 * @param exact          whether {@code committed} came from the checkpoint rather than the group
 */
public record SourceLag(long committed, long latest, Long oldestRecordMs, boolean exact) {

    public long records() {
        return Math.max(0, latest - committed);
    }

    /**
     * Age of the oldest record not applied, in milliseconds at {@code nowMs}; 0 when nothing is
     * behind, null when records are behind but the oldest one's timestamp was not read (a probe
     * whose read of it ran out of time, as a new worker's first may): never 0 for "not known".
     */
    public Long ageMs(long nowMs) {
        if (records() == 0) {
            return 0L;
        }
        return oldestRecordMs == null ? null : Math.max(0, nowMs - oldestRecordMs);
    }
}
