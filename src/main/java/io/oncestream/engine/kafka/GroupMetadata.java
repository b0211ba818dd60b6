package io.oncestream.engine.kafka;

import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A partition's chain point in the metadata of its consumer-group offset:
 * {@code oncestream/v1 job=<job uid> ts=<last write timestamp>}. The offset is the end of a
 * committed batch and the timestamp the last one its chain gave, so the pair is a place the
 * chain can go on from (docs/protocol.md §8, a checkpoint volume lost). The job's identity keeps
 * an earlier job of the same name (the same group id) from being taken for this one.
 */
final class GroupMetadata {

    private static final Pattern FORMAT = Pattern.compile("oncestream/v1 job=(\\S+) ts=([0-9]{1,19})");

    private GroupMetadata() {
    }

    static String encode(String jobInstance, long lastTimestamp) {
        return "oncestream/v1 job=" + jobInstance + " ts=" + lastTimestamp;
    }

    /** The last timestamp {@code metadata} holds for {@code jobInstance}; empty for anything else. */
    static OptionalLong timestamp(String metadata, String jobInstance) {
        if (metadata == null || jobInstance == null) {
            return OptionalLong.empty();
        }
        Matcher m = FORMAT.matcher(metadata);
        if (!m.matches() || !m.group(1).equals(jobInstance)) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(m.group(2)));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }
}
