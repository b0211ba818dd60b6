package io.oncestream.worker;

import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import java.util.logging.StreamHandler;

/**
 * One log format on standard output for the worker and the libraries it uses (Kafka and the
 * Cassandra driver log through SLF4J to JBoss LogManager, which is installed as the JDK's
 * log manager). Must run before any logger is created.
 */
public final class WorkerLogging {

    private WorkerLogging() {
    }

    /** Installs the worker's log setup; call first thing in a main method. */
    public static void install() {
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tLZ %4$-7s [%3$s] %5$s%6$s%n");
        Logger root = Logger.getLogger("");
        for (Handler h : root.getHandlers()) {
            root.removeHandler(h);
        }
        root.addHandler(new StreamHandler(System.out, new SimpleFormatter()) {
            @Override
            public synchronized void publish(LogRecord record) {
                super.publish(record);
                flush();
            }
        });
        root.setLevel(Level.INFO);
        // Kafka prints every client configuration at INFO; keep its warnings only.
        Logger.getLogger("org.apache.kafka").setLevel(Level.WARNING);
    }
}
