/**
 * What the operator and the worker agree on across a process boundary, and nothing else:
 * <ul>
 * <li>where a worker answers: its port and paths ({@link io.oncestream.contract.WorkerEndpoints});
 * <li>the document of {@code GET /progress}, which the worker writes and the operator reads
 *     ({@link io.oncestream.contract.Progress}), and the states it reports in it
 *     ({@link io.oncestream.contract.EngineState});
 * <li>the {@code topic-partition} keys that name a partition in progress documents, checkpoints
 *     and the job's status ({@link io.oncestream.contract.TopicPartitionKey});
 * <li>the vocabulary of a job's configuration that a StreamJob and the worker's configuration
 *     file share: its enums ({@code RecordFormat}, {@code StartingOffsets}, {@code TombstoneMode},
 *     {@code Consistency}, {@code DeadLetterMode}, {@code RestartMode}), every default
 *     ({@link io.oncestream.contract.JobDefaults}), the shapes both check
 *     ({@link io.oncestream.contract.ValidationPatterns}) and the reading of a duration
 *     ({@link io.oncestream.contract.Durations});
 * <li>what a worker reports at a rescale's barrier and the operator gathers into the savepoint:
 *     its {@link io.oncestream.contract.CheckpointSeal}, each partition's
 *     {@link io.oncestream.contract.ChainPoint} and the job's {@link io.oncestream.contract.RecordTotals}.
 * </ul>
 * A leaf: it depends on no other Oncestream package, so both sides can use it without reaching
 * into the other. Its JSON shapes are formats (the seal is also a checkpoint file): golden files
 * pin them.
 */
package io.oncestream.contract;
