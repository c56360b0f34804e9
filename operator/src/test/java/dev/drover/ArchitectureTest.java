package dev.drover;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Which code may use which, read from the compiled classes (every reference counts, not just imports): dependencies
 * point one way, controller → allocrunner → taskrunner → driver, with the state store, the garbage collector, the
 * API model, the device plugins, the raw path to the API server ({@code kube}), allocation networks ({@code network}) and the common module as
 * leaves; the
 * controller's status and Events beneath its reconciling classes, the Node registration beside them; the drivers
 * side by side, over the host-process engine they may share; no package and no type is part of a cycle; no server is
 * written for the JDK's {@code com.sun.net.httpserver}. Read from
 * the sources: no main class of the operator is past {@link #MAX_LINES} lines, and nothing cites a document the
 * repository does not hold. See CONTRIBUTING.md.
 */
class ArchitectureTest {

    private static final JavaClasses DROVER = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.drover");

    /** The packages that run allocations, each using only those after it. */
    private static final String[] RUNNERS = {"agent", "controller", "allocrunner", "taskrunner", "driver"};

    /** The package below {@code driver} that the drivers of host processes share, itself no driver. */
    private static final String HOST_PROCESSES = "host";

    /** The most lines a main source file of the operator may have: one past it is split by responsibility. */
    private static final int MAX_LINES = 450;

    /** The operator module's main sources; tests run in the module's directory. */
    private static final Path MAIN_SOURCES = Path.of("src", "main", "java");

    /** The repository: the operator module's parent. */
    private static final Path REPOSITORY = Path.of("").toAbsolutePath().getParent();

    /**
     * Documents that were never in the repository, cited by their upper-case names; the repository's own are
     * {@code docs/*.md} ({@code docs/api.md}, {@code docs/semantics.md}). The pattern itself names none of them.
     */
    private static final Pattern FOREIGN_DOCUMENT = Pattern.compile("\\b(?:API|SEMANTICS|DESIGN|STYLE|NOTES)\\.md\\b");

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
                        "dev.drover.kube..",
                        "dev.drover.image..",
                        "dev.drover.volumes..",
                        "dev.drover.network..",
                        "dev.drover.podresources..",
                        "dev.drover.common..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "dev.drover.agent..",
                        "dev.drover.controller..",
                        "dev.drover.node..",
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
     * Allocation networks ({@code network}: namespaces, CNI plugins) are a leaf the agent wires: the JDK, the API
     * model, the common module, Jackson and SLF4J, nothing else.
     */
    @Test
    void theNetworkPackageUsesOnlyTheApiTheCommonModuleJacksonAndSlf4j() {
        noClasses()
                .that()
                .resideInAPackage("dev.drover.network..")
                .should()
                .dependOnClassesThat()
                .resideOutsideOfPackages(
                        "dev.drover.network..",
                        "dev.drover.api..",
                        "dev.drover.common..",
                        "com.fasterxml.jackson..",
                        "org.slf4j..",
                        "java..")
                .check(DROVER);
    }

    @Test
    void noMainSourceFileIsOverTheLineLimit() throws IOException {
        List<String> over = new ArrayList<>();
        int files = 0;
        try (Stream<Path> sources = Files.walk(MAIN_SOURCES)) {
            for (Path source :
                    sources.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                files++;
                int lines = lines(source);
                if (lines > MAX_LINES) {
                    over.add(MAIN_SOURCES.relativize(source) + " (" + lines + " lines)");
                }
            }
        }
        assertTrue(files > 0, "no main sources under " + MAIN_SOURCES.toAbsolutePath());
        assertTrue(
                over.isEmpty(),
                () -> over.size() + " main class(es) past " + MAX_LINES
                        + " lines; split each by responsibility (CONTRIBUTING.md), do not excuse it: "
                        + String.join(", ", over));
    }

    @Test
    void nothingCitesADocumentTheRepositoryDoesNotHold() throws IOException {
        List<Path> scanned = citingFiles();
        List<String> citations = new ArrayList<>();
        for (Path file : scanned) {
            // ISO-8859-1 reads any bytes (a binary test resource too); the names sought are ASCII
            String[] lines = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                Matcher m = FOREIGN_DOCUMENT.matcher(lines[i]);
                while (m.find()) {
                    citations.add(REPOSITORY.relativize(file) + ":" + (i + 1) + " " + m.group());
                }
            }
        }
        assertTrue(
                scanned.contains(REPOSITORY.resolve("docs/semantics.md")),
                "docs/semantics.md not among the files read from " + REPOSITORY);
        assertTrue(
                citations.isEmpty(),
                () -> citations.size() + " citation(s) of documents not in the repository; cite docs/*.md instead: "
                        + String.join(", ", citations));
    }

    private static int lines(Path source) throws IOException {
        try (Stream<String> lines = Files.lines(source, StandardCharsets.UTF_8)) {
            return (int) lines.count();
        }
    }

    /**
     * Every main and test source of every module (resources included), every doc ({@code docs/}, the top-level
     * Markdown) and every chart file; build outputs and hidden directories are left out.
     */
    private static List<Path> citingFiles() throws IOException {
        List<Path> files = new ArrayList<>();
        Files.walkFileTree(REPOSITORY, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
                boolean skipped = !dir.equals(REPOSITORY)
                        && (name.startsWith(".") || name.equals("target") || name.equals("node_modules"));
                return skipped ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                Path rel = REPOSITORY.relativize(file);
                String first = rel.getName(0).toString();
                boolean source = rel.getNameCount() > 3
                        && rel.getName(1).toString().equals("src")
                        && (rel.getName(2).toString().equals("main")
                                || rel.getName(2).toString().equals("test"));
                boolean doc = first.equals("docs") || (rel.getNameCount() == 1 && first.endsWith(".md"));
                if (attrs.isRegularFile() && (source || doc || first.equals("charts"))) {
                    files.add(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return files;
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

    /**
     * {@code kube} is the agent's one raw HTTP path to the API server (credentials, bounded answers, writes whose
     * answer is not read): what it is asked to send comes from above, so it knows nothing of who asks.
     */
    @Test
    void theRawApiServerPathKnowsNothingOfItsCallers() {
        noClasses()
                .that()
                .resideInAPackage("dev.drover.kube..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "dev.drover.agent..",
                        "dev.drover.controller..",
                        "dev.drover.node..",
                        "dev.drover.allocrunner..",
                        "dev.drover.taskrunner..",
                        "dev.drover.driver..",
                        "dev.drover.cli..")
                .check(DROVER);
    }

    /** The agent's Node registration (registrar, drift, watch) stands beside the controller and knows nothing of it. */
    @Test
    void theNodeRegistrationKnowsNothingOfTheController() {
        noClasses()
                .that()
                .resideInAPackage("dev.drover.node..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("dev.drover.controller..", "dev.drover.agent..")
                .check(DROVER);
    }

    /** Only the agent wires the Node registration: nothing that runs allocations reaches for the Node. */
    @Test
    void onlyTheAgentWiresTheNodeRegistration() {
        noClasses()
                .that()
                .resideOutsideOfPackages("dev.drover.node..", "dev.drover.agent..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.drover.node..")
                .check(DROVER);
    }

    /**
     * Status building and writing ({@code controller.status}), Kubernetes Events ({@code controller.events}) and the
     * EndpointSlices of allocations' Services ({@code controller.services}) are used by the reconciling classes
     * ({@code controller} itself) or wired by the agent, never the other way.
     */
    @Test
    void statusesEventsAndServicesUseNoReconcilingClass() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "dev.drover.controller.status..",
                        "dev.drover.controller.events..",
                        "dev.drover.controller.services..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.drover.controller")
                .check(DROVER);
    }

    /**
     * Previous allocations on other nodes ({@code controller.previous}: their status, their disks from their agents)
     * are reached through the allocation watcher's interfaces: no reconciling class uses them, and only the agent
     * wires them.
     */
    @Test
    void onlyTheAgentWiresThePreviousAllocationsOfOtherNodes() {
        noClasses()
                .that()
                .resideOutsideOfPackages("dev.drover.controller.previous..", "dev.drover.agent..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.drover.controller.previous..")
                .check(DROVER);
        noClasses()
                .that()
                .resideInAPackage("dev.drover.controller.previous..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.drover.controller")
                .check(DROVER);
    }

    /**
     * The controller's parts ({@code status}, {@code events}, {@code previous}, {@code services}) are side by side:
     * none uses another.
     */
    @Test
    void theControllersPartsDoNotUseEachOther() {
        slices().matching("dev.drover.controller.(*)..")
                .should()
                .notDependOnEachOther()
                .check(DROVER);
    }

    /**
     * The drivers ({@code driver.mock}, {@code driver.rawexec}, {@code driver.exec}, and any added beside them) stand
     * side by side: none uses another. What the drivers of host processes share is in {@code driver.host}, which is
     * no driver of its own.
     */
    @Test
    void driversDoNotUseEachOther() {
        slices().matching("dev.drover.driver.(*)..")
                .that(DescribedPredicate.describe(
                        "are drivers", slice -> !slice.getNamePart(1).equals(HOST_PROCESSES)))
                .should()
                .notDependOnEachOther()
                .check(DROVER);
    }

    /** The host-process engine ({@code driver.host}) serves the drivers and uses none of them. */
    @Test
    void theHostProcessEngineUsesNoDriver() {
        noClasses()
                .that()
                .resideInAPackage("dev.drover.driver." + HOST_PROCESSES + "..")
                .should()
                .dependOnClassesThat(resideInAPackage("dev.drover.driver.*..")
                        .and(not(resideInAPackage("dev.drover.driver." + HOST_PROCESSES + ".."))))
                .check(DROVER);
    }

    /**
     * The servers' handlers are written against {@code web.Exchange} and served by Jetty; none uses the JDK's
     * {@code com.sun.net.httpserver}. {@code cli.AotTraining} alone may: its fake API server runs in the training that
     * records {@code kubectl drover}'s ahead-of-time cache, whose every class loads at each start of the plugin, and
     * the JDK's server adds 57 classes to it where Jetty's would add over 400.
     */
    @Test
    void noServerIsWrittenForTheJdksHttpServer() {
        noClasses()
                .that()
                .doNotHaveFullyQualifiedName("dev.drover.cli.AotTraining")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("com.sun.net.httpserver..")
                .because("handlers take dev.drover.web.Exchange and Jetty serves them (JettyHttps, PlainHttp)")
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
