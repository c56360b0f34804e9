package dev.drover;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The shape of the local cluster's main code. Read from its sources: no file is over {@value #MAX_LINES} lines, so a
 * class that grows past it is split by responsibility into collaborators (CONTRIBUTING.md), not excused. Read from
 * its compiled classes (every reference counts, not just imports): the local API server uses the agent only through
 * {@link #AGENT_ENTRY_PACKAGES} and {@link #AGENT_ENTRY_CLASSES}, so that the agent's internals (runners, drivers,
 * state store, controller) can change without the local cluster noticing, and what the local cluster leans on is
 * written down here rather than found by grep.
 */
class ArchitectureTest {

    /** The most lines a main source file may have. */
    static final int MAX_LINES = 450;

    /** The module's main sources; surefire runs in the module's directory. */
    private static final Path MAIN = Path.of("src", "main", "java");

    /**
     * What the local cluster may use besides its own package and the JDK and libraries: the Allocation API model
     * and its validation ({@code crds}: the server serves that resource) and the common module (user text,
     * durations), which are the agent's leaves, not its internals.
     */
    static final List<String> SHARED_PACKAGES = List.of("dev.drover.local", "dev.drover.api", "dev.drover.common");

    /**
     * Whole packages of the agent the local cluster may use: {@code cli.flags}, the flag parser and help text, so
     * that {@code drover-local} parses and documents its flags as the agent and {@code kubectl drover} do.
     */
    static final List<String> AGENT_ENTRY_PACKAGES = List.of("dev.drover.cli.flags");

    /**
     * Single classes of the agent the local cluster may use (their nested types too), each an entry point:
     *
     * <ul>
     *   <li>{@code agent.Agent}, {@code agent.AgentConfig}, {@code agent.ConfigException}: {@code up} starts the
     *       real agent in its JVM from the same flags its {@code main} takes, and refuses a bad flag as it would;
     *   <li>{@code agent.StopSignal}: {@code up} and {@code apiserver} stop on SIGTERM and Ctrl-C as the agent does;
     *   <li>{@code gateway.Gateway}: the aggregated API {@code agent.drover.dev} is the agent's real gateway,
     *       started beside the server, so that {@code kubectl drover logs} goes the way it goes in a cluster;
     *   <li>{@code httpapi.AgentCertificate}: the gateway's client certificate, issued as the chart's would be;
     *   <li>{@code web.JettyHttps}, {@code web.Relay}, {@code web.MessageSocket}, {@code web.ClientSocket}: the HTTPS
     *       server and the WebSocket relay the agent's API uses, which the server reuses to proxy aggregated exec
     *       upgrades rather than keep a second WebSocket stack;
     *   <li>{@code web.Exchange}: the request and reply that server hands its handlers;
     *   <li>{@code admission.PodRequests}: the local kubelet counts a Pod's requests by the scheduler's rules, which
     *       the agent's own accounting of its node follows too, so that the two cannot count differently.
     * </ul>
     *
     * A new entry needs a reason here; anything else the local cluster needs from the agent is a sign it is
     * emulating the agent rather than running it.
     */
    static final List<String> AGENT_ENTRY_CLASSES = List.of(
            "dev.drover.agent.Agent",
            "dev.drover.agent.AgentConfig",
            "dev.drover.agent.ConfigException",
            "dev.drover.agent.StopSignal",
            "dev.drover.gateway.Gateway",
            "dev.drover.httpapi.AgentCertificate",
            "dev.drover.web.JettyHttps",
            "dev.drover.web.Exchange",
            "dev.drover.web.Relay",
            "dev.drover.web.MessageSocket",
            "dev.drover.web.ClientSocket",
            "dev.drover.admission.PodRequests");

    private static final JavaClasses LOCAL = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.drover.local");

    @Test
    void theLocalClusterUsesTheAgentOnlyThroughItsEntryPoints() {
        classes()
                .that()
                .resideInAPackage("dev.drover.local..")
                .should()
                .onlyDependOnClassesThat(allowed())
                .because("the local cluster runs the agent, it does not reach into it: a new entry point is listed,"
                        + " with its reason, in ArchitectureTest")
                .check(LOCAL);
    }

    /** The API server's handlers take {@code web.Exchange}, as the agent's do; none is written for the JDK's server. */
    @Test
    void noHandlerIsWrittenForTheJdksHttpServer() {
        noClasses()
                .that()
                .resideInAPackage("dev.drover.local..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("com.sun.net.httpserver..")
                .because("the server's handlers take dev.drover.web.Exchange and JettyHttps serves them")
                .check(LOCAL);
    }

    /** A class outside Drover, or one of Drover's the local cluster may use. */
    private static DescribedPredicate<JavaClass> allowed() {
        return DescribedPredicate.describe(
                "are outside dev.drover, in " + SHARED_PACKAGES + ", the agent's " + AGENT_ENTRY_PACKAGES
                        + " or one of " + AGENT_ENTRY_CLASSES,
                type -> {
                    String pkg = type.getPackageName();
                    if (!pkg.equals("dev.drover") && !pkg.startsWith("dev.drover.")) {
                        return true;
                    }
                    String topLevel = type.getName().split("\\$", 2)[0];
                    return within(pkg, SHARED_PACKAGES)
                            || AGENT_ENTRY_PACKAGES.contains(pkg)
                            || AGENT_ENTRY_CLASSES.contains(topLevel);
                });
    }

    private static boolean within(String pkg, List<String> roots) {
        return roots.stream().anyMatch(root -> pkg.equals(root) || pkg.startsWith(root + "."));
    }

    @Test
    void noMainSourceFileIsOverTheLineLimit() throws IOException {
        List<Path> sources;
        try (Stream<Path> files = Files.walk(MAIN)) {
            sources = files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        }
        assertThat(sources).as("Java sources under %s", MAIN.toAbsolutePath()).isNotEmpty();
        List<String> over = new ArrayList<>();
        for (Path source : sources) {
            int lines = Files.readAllLines(source, StandardCharsets.UTF_8).size();
            if (lines > MAX_LINES) {
                over.add(MAIN.relativize(source) + " has " + lines + " lines");
            }
        }
        assertThat(over)
                .as("main source files over %d lines: split each by responsibility (CONTRIBUTING.md)", MAX_LINES)
                .isEmpty();
    }
}
