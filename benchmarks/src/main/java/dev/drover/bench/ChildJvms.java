package dev.drover.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The processes of a bench run, each a JVM of its own: the bench itself in a light JVM, the local API server
 * ({@code drover-local apiserver}) and the agent jar.
 *
 * @param benchMain the bench's main class, run again in a light JVM
 * @param apiServerMain the main class of drover-local, whose {@code apiserver} command starts the API server
 */
record ChildJvms(String benchMain, String apiServerMain) {

    /**
     * The local API server's JVM: one compiler tier and the serial collector. It serves for the one run, and C2's
     * compiling would come out of the two cores the agent is measured on, as a real API server's would not.
     */
    static final List<String> SERVER_JVM = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

    /** How long a child asked to end is waited for. */
    static final Duration STOP_WAIT = Duration.ofSeconds(60);

    /** Whether this JVM runs with {@link #SERVER_JVM}. */
    static boolean inLightJvm() {
        return ManagementFactory.getRuntimeMXBean().getInputArguments().containsAll(SERVER_JVM);
    }

    /**
     * Runs the bench again in a JVM of its own with {@link #SERVER_JVM}, its output passed through: the bench plays
     * the users, and with the JVM's defaults its C2 compiler took half as much CPU again as the agent it measures,
     * on the same two cores.
     */
    int benchInLightJvm(String[] args) throws IOException, InterruptedException {
        List<String> command = benchJvm();
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), benchMain));
        command.addAll(Arrays.asList(args));
        Process bench = new ProcessBuilder(command).inheritIO().start();
        try {
            return bench.waitFor();
        } finally {
            bench.destroy();
        }
    }

    /**
     * Runs {@code bench ARGS} as a child in a light JVM of its own, its output to {@code log}; returns its exit
     * code. {@code --aot}'s training run.
     */
    int benchChild(List<String> args, Path log) throws IOException, InterruptedException {
        List<String> command = benchJvm();
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), benchMain));
        command.addAll(args);
        Process bench = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            if (!bench.waitFor(CHILD_LIMIT.toMinutes(), TimeUnit.MINUTES)) {
                throw new IOException(
                        "the bench child ran past " + CHILD_LIMIT.toMinutes() + " minutes; its log: " + log);
            }
            return bench.exitValue();
        } finally {
            // its API server, agent and tasks too, should it be cut short
            bench.descendants().forEach(ProcessHandle::destroy);
            bench.destroy();
        }
    }

    /** The longest a bench child may run. */
    static final Duration CHILD_LIMIT = Duration.ofMinutes(20);

    /** A started API server and where it serves. */
    record Server(Process process, URI url) {}

    /**
     * Starts the local API server ({@code drover-local apiserver}, from this jar) with {@link #SERVER_JVM}, for node
     * {@code node}, and waits for its ready line; its output goes on to {@code log}. The agent's kubeconfig, under
     * the chart's RBAC, is written to {@code agentKubeconfigs/NODE.kubeconfig}. {@code flags} are the server's
     * further flags ({@code --kube-version}, {@code --node-allocatable}).
     */
    Server startServer(Path kubeconfig, Path agentKubeconfigs, String node, Path log, List<String> flags)
            throws IOException, InterruptedException {
        List<String> command = java(SERVER_JVM);
        command.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                apiServerMain,
                "apiserver",
                "--kubeconfig",
                kubeconfig.toString(),
                "--nodes",
                node,
                "--agent-kubeconfigs",
                agentKubeconfigs.toString()));
        command.addAll(flags);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        var lines = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        List<String> seen = new ArrayList<>();
        Pattern ready = Pattern.compile("ready at (https?://\\S+)");
        for (String line; (line = lines.readLine()) != null; ) {
            seen.add(line);
            Matcher m = ready.matcher(line);
            if (m.find()) {
                Thread.ofPlatform().daemon().name("bench-apiserver-log").start(() -> drain(lines, log));
                return new Server(p, URI.create(m.group(1)));
            }
        }
        p.waitFor(10, TimeUnit.SECONDS);
        throw new IOException("the local API server exited before it was ready:\n" + String.join("\n", seen));
    }

    private static void drain(BufferedReader lines, Path log) {
        try (var out = Files.newBufferedWriter(log)) {
            for (String line; (line = lines.readLine()) != null; ) {
                out.write(line);
                out.newLine();
            }
        } catch (IOException ignored) {
            // the server is gone
        }
    }

    /** Starts the agent jar with {@code jvm} and {@code args}, its output to {@code log}, and waits until it is ready. */
    static Process startAgent(Path jar, List<String> jvm, List<String> args, Path log, AgentProbe probe)
            throws IOException, InterruptedException {
        Process p = launchAgent(jar, jvm, args, log);
        awaitReady(p, log, probe);
        return p;
    }

    /** Starts the agent jar with {@code jvm} and {@code args}, its output to {@code log}; returns at once. */
    static Process launchAgent(Path jar, List<String> jvm, List<String> args, Path log) throws IOException {
        List<String> command = java(jvm);
        command.addAll(List.of("-jar", jar.toString()));
        command.addAll(args);
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
    }

    /** Waits, at most 2 minutes, until the agent {@code p} says it is ready; IOException if it exits or never does. */
    static void awaitReady(Process p, Path log, AgentProbe probe) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IOException("the agent exited with " + p.exitValue() + "; its log: " + log);
            }
            if (probe.ready()) {
                return;
            }
            Thread.sleep(50);
        }
        p.destroyForcibly();
        throw new IOException("the agent did not get ready in 2 minutes; its log: " + log);
    }

    static void stop(Process p) throws InterruptedException {
        stop(p, STOP_WAIT);
    }

    /**
     * Asks {@code p} to end (SIGTERM) and waits for it at most {@code wait}; one still running then is killed.
     *
     * @return whether it ended when asked
     */
    static boolean stop(Process p, Duration wait) throws InterruptedException {
        p.destroy();
        if (p.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS)) {
            return true;
        }
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
        return false;
    }

    /**
     * {@link #SERVER_JVM}, and the temporary directory this JVM was given ({@code java -Djava.io.tmpdir=DIR}), where
     * the bench makes its own.
     */
    private static List<String> benchJvm() {
        List<String> command = java(SERVER_JVM);
        command.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        return command;
    }

    private static List<String> java(List<String> jvm) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvm);
        return command;
    }
}
