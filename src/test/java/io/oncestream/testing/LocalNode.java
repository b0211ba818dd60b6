package io.oncestream.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * The test run's real node ({@code deploy/local/node.sh}: kubelet, containerd, runc) with the
 * images of this build loaded ({@code deploy/local/images.sh}, from src/main/docker/Dockerfile).
 *
 * <p>Containers are processes of this machine: the tests find a worker's JVM through
 * {@code /proc} (its command line, and its container's id in its cgroup), kill it with {@code SIGKILL} as a
 * crash would, and read what runc enforced on it (user, capabilities, seccomp, read-only root).
 */
public final class LocalNode {

    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(10);

    private final LocalService service;

    LocalNode(LocalService service) {
        this.service = service;
    }

    /** Builds the images of the packaged application and starts the node (or reuses it), images loaded. */
    static LocalNode start(org.junit.jupiter.api.extension.ExtensionContext context) {
        Path repo = LocalService.repoDir();
        Command.Result built = Command.of("bash", repo.resolve("deploy/local/images.sh").toString(), "build")
                .directory(repo).env(LocalService.testSettings(repo)).run(BUILD_TIMEOUT);
        System.out.print(built.stderr());
        built.orThrow();
        LocalService node = LocalService.shared(context, "node");
        node.run("load");
        return new LocalNode(node);
    }

    /**
     * The directory on this machine behind a bound PersistentVolumeClaim: the controller-manager's
     * hostPath provisioner names {@code /tmp/hostpath_pv/<id>}, which is the stack's volumes
     * directory seen from the controller-manager and the node.
     */
    public Path volumeDir(io.fabric8.kubernetes.client.KubernetesClient admin, String namespace, String claim) {
        var pvc = admin.persistentVolumeClaims().inNamespace(namespace).withName(claim).get();
        if (pvc == null || pvc.getSpec().getVolumeName() == null) {
            throw new IllegalStateException("claim " + namespace + "/" + claim + " is not bound");
        }
        String path = admin.persistentVolumes().withName(pvc.getSpec().getVolumeName()).get().getSpec().getHostPath().getPath();
        Path local = Path.of(LocalService.testSettings(LocalService.repoDir()).get("ONCESTREAM_LOCAL_DIR"), "volumes");
        return local.resolve(Path.of(path).getFileName());
    }

    /** The script's service, e.g. to restart the node. */
    public LocalService service() {
        return service;
    }

    /**
     * The PID (as this machine sees it) of the worker JVM running in {@code pod}'s current
     * container (found by the container id in the process's cgroup), if it runs.
     */
    public OptionalLong workerPid(Pod pod) {
        return jvmPid(pod, "worker");
    }

    /**
     * The PID of the JVM started with entry point {@code entry} ({@code worker} or
     * {@code operator}) in {@code pod}'s current container, if it runs.
     */
    public OptionalLong jvmPid(Pod pod, String entry) {
        if (pod == null || pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
            return OptionalLong.empty();
        }
        String id = pod.getStatus().getContainerStatuses().stream()
                .filter(c -> c.getState() != null && c.getState().getRunning() != null && c.getContainerID() != null)
                .map(c -> c.getContainerID().replaceFirst("^[a-z]+://", "")).findFirst().orElse(null);
        if (id == null) {
            return OptionalLong.empty();
        }
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path proc : procs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
                if (read(proc.resolve("cmdline")).contains("quarkus-run.jar\0" + entry) && read(proc.resolve("cgroup")).contains(id)) {
                    return OptionalLong.of(Long.parseLong(proc.getFileName().toString()));
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return OptionalLong.empty();
    }

    /** Kills the worker JVM of {@code pod} with SIGKILL, as a crash would; false if none was running. */
    public boolean killWorker(Pod pod) {
        OptionalLong pid = workerPid(pod);
        if (pid.isEmpty()) {
            return false;
        }
        return ProcessHandle.of(pid.getAsLong()).map(ProcessHandle::destroyForcibly).orElse(false);
    }

    /**
     * What the kernel enforces on process {@code pid}: {@code Uid}, {@code NoNewPrivs},
     * {@code Seccomp} and {@code CapEff} from its status, and {@code rootfs} ("ro" or "rw", the
     * options of the mount at its "/").
     */
    public Map<String, String> confinement(long pid) {
        Map<String, String> out = new java.util.TreeMap<>();
        for (String line : read(Path.of("/proc", String.valueOf(pid), "status")).split("\n")) {
            String[] kv = line.split(":\\s*", 2);
            if (List.of("Uid", "NoNewPrivs", "Seccomp", "CapEff").contains(kv[0])) {
                out.put(kv[0], kv[1].split("\\s+")[0]);
            }
        }
        for (String line : read(Path.of("/proc", String.valueOf(pid), "mountinfo")).split("\n")) {
            String[] f = line.split(" ");
            if (f.length > 5 && f[4].equals("/")) {
                out.put("rootfs", List.of(f[5].split(",")).contains("ro") ? "ro" : "rw");
            }
        }
        return out;
    }

    private static String read(Path file) {
        try {
            return "\0" + Files.readString(file, java.nio.charset.StandardCharsets.ISO_8859_1) + "\0";
        } catch (IOException e) {
            return "";
        }
    }

    /** The node's containerd tasks ({@code ctr -n k8s.io tasks ls}), one line each. */
    public List<String> tasks() {
        return new ArrayList<>(List.of(service.run("ctr", "-n", "k8s.io", "tasks", "ls").split("\n")));
    }
}
