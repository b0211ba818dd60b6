/**
 * What the operator and the worker agree on across a process boundary, and nothing else: the
 * states a worker reports in {@code GET /progress} ({@link io.oncestream.contract.EngineState})
 * and the {@code topic-partition} keys that name a partition in progress documents, checkpoints
 * and the job's status ({@link io.oncestream.contract.TopicPartitionKey}). A leaf: it depends on
 * no other Oncestream package, so both sides can use it without reaching into the other.
 */
package io.oncestream.contract;
