package dev.drover;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

/**
 * Which code may use which, read from the compiled classes (every reference counts, not just imports): dependencies
 * point one way, controller → allocrunner → taskrunner → driver, with the state store, the garbage collector, the
 * API model, the device plugins and the common module as leaves; no package and no type is part of a cycle. See CONTRIBUTING.md.
 */
class ArchitectureTest {

    private static final JavaClasses DROVER = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.drover");

    /** The packages that run allocations, each using only those after it. */
    private static final String[] RUNNERS = {"agent", "controller", "allocrunner", "taskrunner", "driver"};

    @Test
    void noPackageIsPartOfACycle() {
        slices().matching("dev.drover.(**)").should().beFreeOfCycles().check(DROVER);
    }

    @Test
    void noTypeIsPartOfACycle() {
        slices().assignedFrom(new TopLevelTypes()).should().beFreeOfCycles().check(DROVER);
    }

    @Test
    void runnersUseOnlyThePackagesBelowThem() {
        for (int i = 1; i < RUNNERS.length; i++) {
            String[] above = new String[i];
            for (int j = 0; j < i; j++) {
                above[j] = "dev.drover." + RUNNERS[j] + "..";
            }
            noClasses()
                    .that()
                    .resideInAPackage("dev.drover." + RUNNERS[i] + "..")
                    .should()
                    .dependOnClassesThat()
                    .resideInAnyPackage(above)
                    .check(DROVER);
        }
    }

    @Test
    void leavesUseNoOtherPartOfTheAgent() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "dev.drover.state..",
                        "dev.drover.gc..",
                        "dev.drover.api..",
                        "dev.drover.deviceplugin..",
                        "dev.drover.cgroups..",
                        "dev.drover.credentials..",
                        "dev.drover.common..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "dev.drover.agent..",
                        "dev.drover.controller..",
                        "dev.drover.allocrunner..",
                        "dev.drover.taskrunner..",
                        "dev.drover.driver..",
                        "dev.drover.allocwatcher..",
                        "dev.drover.devices..",
                        "dev.drover.httpapi..",
                        "dev.drover.gateway..",
                        "dev.drover.cli..")
                .check(DROVER);
    }

    @Test
    void theCommonModuleUsesNothingElseOfDrover() {
        noClasses()
                .that()
                .resideInAPackage("dev.drover.common..")
                .should()
                .dependOnClassesThat()
                .resideOutsideOfPackages("dev.drover.common..", "java..")
                .check(DROVER);
    }

    @Test
    void theCgroupLayerUsesOnlyTheJdkAndTheCommonModule() {
        noClasses()
                .that()
                .resideInAPackage("dev.drover.cgroups..")
                .should()
                .dependOnClassesThat()
                .resideOutsideOfPackages("dev.drover.cgroups..", "dev.drover.common..", "java..")
                .check(DROVER);
    }

    /**
     * What the agent's API and the gateway agree on (paths, subresources and their verbs, exec subprotocols, header
     * and annotation names) is in {@code agentapi}, which knows neither; the agent's API knows nothing of the gateway.
     */
    @Test
    void theAgentApiProtocolStandsApartFromItsServers() {
        noClasses()
                .that()
                .resideInAPackage("dev.drover.agentapi..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("dev.drover.httpapi..", "dev.drover.gateway..")
                .check(DROVER);
        noClasses()
                .that()
                .resideInAPackage("dev.drover.httpapi..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.drover.gateway..")
                .check(DROVER);
    }

    /** A type with the types nested in it: a nested type naming its outer one is no cycle. */
    private static final class TopLevelTypes implements SliceAssignment {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass c) {
            JavaClass top = c;
            while (top.getEnclosingClass().isPresent()) {
                top = top.getEnclosingClass().get();
            }
            return SliceIdentifier.of(top.getName());
        }

        @Override
        public String getDescription() {
            return "top-level types";
        }
    }
}
