package io.oncestream.operator;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** Who this operator instance is, for the leader-election lease and the events it records. */
final class OperatorIdentity {

    private static final String IDENTITY = compute();

    private OperatorIdentity() {
    }

    static String get() {
        return IDENTITY;
    }

    private static String compute() {
        String pod = System.getenv("POD_NAME");
        if (pod != null && !pod.isBlank()) {
            return pod;
        }
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "unknown-host";
        }
        return host + "-" + ProcessHandle.current().pid();
    }
}
