package io.oncestream.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.equivalentTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import io.oncestream.engine.checkpoint.TopicPartitionKey;

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
    void operatorSharesOnlyTheConfigSchemaTheCelCompilerAndPartitionKeysWithTheEngine() {
        noClasses().that().resideInAPackage("io.oncestream.operator..")
                .should().dependOnClassesThat(resideInAnyPackage("io.oncestream.engine", "io.oncestream.engine.checkpoint..",
                        "io.oncestream.engine.plan..", "io.oncestream.engine.kafka..", "io.oncestream.engine.cassandra..",
                        "io.oncestream.worker..", "org.apache.kafka..", "com.datastax..")
                        .and(not(equivalentTo(TopicPartitionKey.class))))
                .check(MAIN);
    }

    @Test
    void apiUsesTheKubernetesModelAndTheJobConfigurationsVocabularyOnly() {
        // The enums and defaults a StreamJob shares with the worker's configuration live in engine.config.
        noClasses().that().resideInAPackage("io.oncestream.api..")
                .should().dependOnClassesThat().resideInAnyPackage("io.oncestream.engine", "io.oncestream.engine.checkpoint..",
                        "io.oncestream.engine.plan..", "io.oncestream.engine.kafka..", "io.oncestream.engine.cassandra..",
                        "io.oncestream.engine.transform..", "io.oncestream.worker..",
                        "io.oncestream.operator..", "io.quarkus..", "io.javaoperatorsdk..")
                .allowEmptyShould(true)
                .check(MAIN);
    }
}
