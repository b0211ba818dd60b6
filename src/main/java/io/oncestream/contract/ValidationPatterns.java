package io.oncestream.contract;

/**
 * The shapes of the values that a StreamJob and the worker's configuration both check: the CRD's
 * {@code pattern}s (so that {@code kubectl apply} refuses a bad value at once) and the worker's
 * own checks of its configuration file are these constants, never a copy. Each is anchored, as
 * the CRD's OpenAPI schema needs; Java's {@code matches()} reads it the same way.
 */
public final class ValidationPatterns {

    /** A Kafka topic name: letters, digits, {@code .}, {@code _} and {@code -}, at most 249. */
    public static final String TOPIC_NAME = "^[a-zA-Z0-9._-]{1,249}$";

    /** A CQL identifier without quotes: a letter, then letters, digits or {@code _}, at most 48 in all. */
    public static final String CQL_IDENTIFIER = "^[a-zA-Z][a-zA-Z0-9_]{0,47}$";

    /** One {@code host:port} (a Cassandra contact point). */
    public static final String HOST_PORT = "^[^:\\s]+:[0-9]{1,5}$";

    /** Comma-separated {@code host:port}s without spaces (Kafka's {@code bootstrap.servers}). */
    public static final String HOST_PORT_LIST = "^[^,\\s]+:[0-9]{1,5}(,[^,\\s]+:[0-9]{1,5})*$";

    /** A duration as a StreamJob writes it: whole numbers with a unit each, {@code 500ms}, {@code 1m30s}, {@code 2h}. */
    public static final String DURATION = "^([0-9]+(ms|s|m|h))+$";

    private ValidationPatterns() {
    }
}
