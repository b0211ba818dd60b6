package io.oncestream;

import java.util.Arrays;

import io.oncestream.worker.CheckpointCommand;
import io.oncestream.worker.WorkerMain;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;

/**
 * The one entry point of the Oncestream image: {@code operator} (the default) starts the
 * Quarkus operator; {@code worker ...} runs a worker and {@code checkpoint inspect ...} reads a
 * worker's checkpoint, both without starting Quarkus at all.
 */
@QuarkusMain
public final class OncestreamMain {

    private OncestreamMain() {
    }

    public static void main(String... args) {
        if (args.length > 0 && args[0].equals("worker")) {
            WorkerMain.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("checkpoint")) {
            CheckpointCommand.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("operator")) {
            args = Arrays.copyOfRange(args, 1, args.length);
        }
        Quarkus.run(args);
    }
}
