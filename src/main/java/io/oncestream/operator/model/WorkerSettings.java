package io.oncestream.operator.model;

/**
 * Operator-wide settings the worker objects are built with.
 *
 * @param defaultImage        worker image when a job names none (the operator's own image)
 * @param imagePullPolicy     pull policy of worker containers
 * @param terminationGraceSeconds time a worker has to stop at a safe point after SIGTERM
 */
public record WorkerSettings(String defaultImage, String imagePullPolicy, long terminationGraceSeconds) {
}
