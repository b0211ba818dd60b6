package io.oncestream.operator.progress;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStateWaiting;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;

import io.oncestream.api.StreamJobResources;

/** The worker pods a job should have, as found in the cluster, and which of them can be asked for progress. */
public final class WorkerPods {

    /** An expected worker: its pod name, the pod if it exists, its readiness and the address to poll (null if none). */
    public record Expected(String podName, int ordinal, Pod pod, boolean ready, String pollAddress) {
    }

    private WorkerPods() {
    }

    /** Waiting reasons of a container that is on its way to running, not stuck. */
    private static final java.util.Set<String> STARTING = java.util.Set.of("ContainerCreating", "PodInitializing");

    /**
     * Why a worker pod's container does not run, or null: it waits for a reason other than
     * being created (CrashLoopBackOff, ImagePullBackOff, CreateContainerConfigError...), with that
     * reason's message and the container's last exit: its code and message, which for a worker
     * that failed is the end of its log (the container's terminationMessagePolicy). E.g.
     * {@code container worker: CrashLoopBackOff; last exit code 1: Unrecognized VM option 'X'}.
     */
    public static String containerProblem(Pod pod) {
        if (pod == null || pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
            return null;
        }
        for (ContainerStatus c : pod.getStatus().getContainerStatuses()) {
            ContainerStateWaiting waiting = c.getState() == null ? null : c.getState().getWaiting();
            if (waiting == null || waiting.getReason() == null || STARTING.contains(waiting.getReason())) {
                continue;
            }
            StringBuilder out = new StringBuilder("container ").append(c.getName()).append(": ").append(waiting.getReason());
            if (waiting.getMessage() != null && !waiting.getMessage().isBlank() && !waiting.getReason().equals("CrashLoopBackOff")) {
                out.append(" (").append(oneLine(waiting.getMessage())).append(')'); // the back-off's message only repeats the pod's name
            }
            ContainerStateTerminated last = c.getLastState() == null ? null : c.getLastState().getTerminated();
            if (last != null) {
                out.append("; last exit code ").append(last.getExitCode());
                if (last.getMessage() != null && !last.getMessage().isBlank()) {
                    out.append(": ").append(oneLine(last.getMessage()));
                } else if (last.getReason() != null) {
                    out.append(" (").append(last.getReason()).append(')');
                }
            }
            return out.toString();
        }
        return null;
    }

    private static String oneLine(String text) {
        return text.strip().replaceAll("\\s*\\n\\s*", " / ");
    }

    /**
     * One entry per ordinal {@code 0..replicas-1}. A pod is polled when it runs and has an IP,
     * ready or not: a failed worker is not ready yet still says why on {@code /progress}.
     */
    public static List<Expected> expected(String job, int replicas, Collection<Pod> pods) {
        Map<String, Pod> byName = pods.stream().collect(Collectors.toMap(p -> p.getMetadata().getName(), Function.identity(),
                (a, b) -> a));
        List<Expected> result = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            String name = StreamJobResources.podName(job, i);
            Pod pod = byName.get(name);
            if (pod == null || pod.getMetadata().getDeletionTimestamp() != null) {
                result.add(new Expected(name, i, pod, false, null));
                continue;
            }
            boolean ready = pod.getStatus() != null && pod.getStatus().getConditions() != null
                    && pod.getStatus().getConditions().stream()
                            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
            boolean running = pod.getStatus() != null && "Running".equals(pod.getStatus().getPhase());
            String ip = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
            String address = running && ip != null && !ip.isBlank()
                    ? (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + StreamJobResources.WORKER_HTTP_PORT
                    : null;
            result.add(new Expected(name, i, pod, ready, address));
        }
        return result;
    }
}
