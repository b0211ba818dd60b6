package io.oncestream.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * Network partitions between a pod of the test stack and one of the stack's ports, made with
 * {@code deploy/local/faults.sh} inside the stack's own network namespace: the pod's packets
 * to that port are dropped, so its clients time out rather than being refused. Every partition
 * is healed on {@link #close()}, whatever happened meanwhile (one test makes partitions at a
 * time: healing removes all of them).
 */
public final class NetworkFaults implements AutoCloseable {

    /** The stack's ports, as test.env and the service scripts have them. */
    public static final int CASSANDRA = 9042;
    public static final int KAFKA = 9092;
    public static final int API_SERVER = 6443;

    private final List<String[]> open = new ArrayList<>();

    /** Starts with no partition at all: rules a killed test run left behind are removed. */
    public NetworkFaults() {
        LocalService.runScript("faults", "heal-all");
    }

    /** Drops every packet from {@code podIp} to the stack's {@code port}, on open connections too. */
    public synchronized void drop(String podIp, int port) {
        LocalService.runScript("faults", "drop", podIp, String.valueOf(port));
        open.add(new String[] {podIp, String.valueOf(port)});
    }

    /** Lets every partition made here pass again. */
    public synchronized void healAll() {
        open.clear();
        LocalService.runScript("faults", "heal-all");
    }

    @Override
    public void close() {
        healAll();
    }
}
