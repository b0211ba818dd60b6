package io.oncestream.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.equivalentTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import io.oncestream.engine.checkpoint.Savepoint;

/**
 * The package rules of the design: the engine knows nothing of Kubernetes or Quarkus, its seams
 * sit above their Kafka and Cassandra implementations, and no package depends on itself through
 * others.
 */
class PackageBoundariesTest {

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.oncestream");

    @Test
    void engineUsesNoKubernetesQuarkusOrOtherOncestreamParts() {
        noClasses().that().resideInAPackage("io.oncestream.engine..")
                .should().dependOnClassesThat().resideInAnyPackage("io.fabric8..", "io.quarkus..", "io.javaoperatorsdk..",
                        "jakarta..", "io.oncestream.worker..", "io.oncestream.operator..", "io.oncestream.api..")
                .check(MAIN);
    }

    /** What operator and worker share across the process boundary is a leaf: it reaches into neither side. */
    @Test
    void theContractDependsOnNoOtherOncestreamPackage() {
        noClasses().that().resideInAPackage("io.oncestream.contract..")
                .should().dependOnClassesThat().resideInAnyPackage("io.oncestream.engine..", "io.oncestream.worker..",
                        "io.oncestream.operator..", "io.oncestream.api..", "io.fabric8..", "io.quarkus..", "io.javaoperatorsdk..")
                .check(MAIN);
    }

    /**
     * The contract is data and the rules that read it: the JDK and Jackson's annotations and
     * mapper, nothing that opens a connection or touches a file, so either side can hold it.
     */
    @Test
    void theContractUsesOnlyTheJdkAndJackson() {
        classes().that().resideInAPackage("io.oncestream.contract..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java.lang..", "java.util..", "java.time..",
                        "com.fasterxml.jackson..", "io.oncestream.contract..")
                .check(MAIN);
    }

    @Test
    void noPackageCycles() {
        slices().matching("io.oncestream.(**)").should().beFreeOfCycles().check(MAIN);
    }

    @Test
    void theEngineDependsOnItsSeamsNotOnTheirImplementations() {
        noClasses().that().resideInAPackage("io.oncestream.engine")
                .should().dependOnClassesThat().resideInAnyPackage("io.oncestream.engine.kafka..", "io.oncestream.engine.cassandra..")
                .check(MAIN);
    }

    @Test
    void workerUsesTheEngineButNoKubernetesOrQuarkus() {
        noClasses().that().resideInAPackage("io.oncestream.worker..")
                .should().dependOnClassesThat().resideInAnyPackage("io.fabric8..", "io.quarkus..", "io.javaoperatorsdk..",
                        "io.oncestream.operator..")
                .check(MAIN);
    }

    @Test
    void operatorSharesOnlyTheConfigSchemaTheCelCompilerAndTheSavepointWithTheEngine() {
        noClasses().that().resideInAPackage("io.oncestream.operator..")
                .should().dependOnClassesThat(resideInAnyPackage("io.oncestream.engine", "io.oncestream.engine.checkpoint..",
                        "io.oncestream.engine.plan..", "io.oncestream.engine.kafka..", "io.oncestream.engine.cassandra..",
                        "io.oncestream.worker..", "org.apache.kafka..", "com.datastax..")
                        // the rescale's savepoint, which the operator makes from the workers' seals and hands to the new workers
                        .and(not(equivalentTo(Savepoint.class)))
                        // the lag a job's probe reads (OperatorLag, below)
                        .and(not(equivalentTo(io.oncestream.engine.kafka.LagProbe.class)))
                        .and(not(equivalentTo(io.oncestream.engine.SourceLag.class)))
                        .and(not(equivalentTo(io.oncestream.engine.SourceException.class)))
                        // how long a failing lag probe, and its Kafka cluster, wait before the next try
                        .and(not(equivalentTo(io.oncestream.engine.Backoff.class))))
                .check(MAIN);
        // One exception, in one room: progress reads a job's lag from Kafka itself, with the
        // worker's own probe, while no worker of the job reports one.
        noClasses().that().resideInAPackage("io.oncestream.operator..").and().haveNameNotMatching(
                        java.util.regex.Pattern.quote(io.oncestream.operator.progress.OperatorLag.class.getName()) + "(\\$.*)?")
                .should().dependOnClassesThat().areAssignableTo(io.oncestream.engine.kafka.LagProbe.class)
                .check(MAIN);
    }

    @Test
    void apiUsesTheKubernetesModelAndTheContractOnly() {
        // The enums and defaults a StreamJob shares with the worker's configuration live in the contract.
        noClasses().that().resideInAPackage("io.oncestream.api..")
                .should().dependOnClassesThat().resideInAnyPackage("io.oncestream.engine..", "io.oncestream.worker..",
                        "io.oncestream.operator..", "io.quarkus..", "io.javaoperatorsdk..")
                .check(MAIN);
    }

    /**
     * The operator's rooms: {@code model} builds desired objects and worker configurations as pure
     * functions, {@code status} projects what workers report into a status, {@code progress}
     * reads the workers, {@code cache} keeps what the informers hold small. None of them calls
     * the API server or the reconciler (the root package, which wires them); status and model
     * read no worker; only progress opens connections (to the workers, and to Kafka for the lag
     * of a job no worker reports).
     */
    @Test
    void theOperatorsRoomsCallNoApiServerAndDependOnlyDownwards() {
        noClasses().that().resideInAnyPackage("io.oncestream.operator.model..", "io.oncestream.operator.status..",
                        "io.oncestream.operator.progress..", "io.oncestream.operator.cache..")
                .should().dependOnClassesThat().resideInAnyPackage("io.fabric8.kubernetes.client.dsl..",
                        "io.fabric8.kubernetes.client.informers..", "io.javaoperatorsdk.operator.api.reconciler..")
                .orShould().dependOnClassesThat().areAssignableTo(io.fabric8.kubernetes.client.KubernetesClient.class)
                .orShould().dependOnClassesThat().resideInAPackage("io.oncestream.operator")
                .check(MAIN);
        noClasses().that().resideInAnyPackage("io.oncestream.operator.model..", "io.oncestream.operator.status..")
                .should().dependOnClassesThat().resideInAnyPackage("io.oncestream.operator.progress..", "java.net.http..")
                .check(MAIN);
        noClasses().that().resideInAPackage("io.oncestream.operator.status..")
                .should().dependOnClassesThat().resideInAPackage("io.oncestream.operator.cache..")
                .check(MAIN);
    }

    /**
     * The hand-off (docs/protocol.md §11) writes to the API server (the savepoint, the parked
     * pods' deletion) as a step of a reconcile: it sits above model, status and progress and
     * below the reconciler, which alone calls it; it knows neither the reconciler nor the webhook.
     */
    @Test
    void theHandoffIsCalledByTheReconcilerAloneAndCallsNeitherItNorTheWebhook() {
        noClasses().that().resideInAPackage("io.oncestream.operator.handoff..")
                .should().dependOnClassesThat().resideInAnyPackage("io.oncestream.operator", "io.oncestream.operator.admission..")
                .check(MAIN);
        noClasses().that().resideOutsideOfPackages("io.oncestream.operator", "io.oncestream.operator.handoff..")
                .should().dependOnClassesThat().resideInAPackage("io.oncestream.operator.handoff..")
                .check(MAIN);
    }
}
