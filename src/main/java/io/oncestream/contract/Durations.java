package io.oncestream.contract;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as a StreamJob writes them ({@code 500ms}, {@code 1s}, {@code 1m30s}, {@code 2h}: the
 * shape of {@link ValidationPatterns#DURATION}) in the milliseconds of the worker's
 * configuration: the one reading of them, for the operator's mapping and the defaults alike.
 */
public final class Durations {

    private static final Pattern DURATION = Pattern.compile(ValidationPatterns.DURATION);
    private static final Pattern PART = Pattern.compile("([0-9]+)(ms|s|m|h)");

    private Durations() {
    }

    /** Whether {@code text} is a duration. */
    public static boolean isDuration(String text) {
        return text != null && DURATION.matcher(text).matches();
    }

    /**
     * The milliseconds of a duration.
     *
     * @throws IllegalArgumentException with {@link #notADuration} if {@code duration} is not one,
     *         or is longer than a {@code long} of milliseconds holds (about 292 million years)
     */
    public static long millis(String duration) {
        if (!isDuration(duration)) {
            throw new IllegalArgumentException(notADuration(duration));
        }
        try {
            long total = 0;
            Matcher part = PART.matcher(duration);
            while (part.find()) {
                long n = Long.parseLong(part.group(1));
                total = Math.addExact(total, Math.multiplyExact(n, switch (part.group(2)) {
                    case "ms" -> 1L;
                    case "s" -> 1000L;
                    case "m" -> 60_000L;
                    default -> 3_600_000L;
                }));
            }
            return total;
        } catch (ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException("'" + duration + "' is longer than any duration can be");
        }
    }

    /** What is wrong with {@code text}, which is not a duration. */
    public static String notADuration(String text) {
        return "'" + text + "' is not a duration like 500ms, 1s, 1m";
    }
}
