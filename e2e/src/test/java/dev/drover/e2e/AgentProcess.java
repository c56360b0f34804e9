package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The shipped agent jar, {@code operator/target/drover-agent.jar}, as a separate process; its log goes to a file.
 * Unless the test names one, the agent gets a cgroup parent of its own below this process's cgroup
 * ({@code drover-it-XXXXXXXX}), which {@link #close()} removes with the empty task cgroups in it: tests leave no
 * cgroup behind.
 */
@SuppressWarnings("try") // close() waits for the agent to stop: an interrupted test stops waiting, as it should
final class AgentProcess implements AutoCloseable {

    static final Path JAR = Path.of("..", "operator", "target", "drover-agent.jar");

    /** A scrape of the agent's {@code /metrics}, served on {@code port} of this machine. */
    static String metrics(int port) throws IOException, InterruptedException {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
        }
    }

    private final List<String> args;
    private final Path log;
    /** The cgroup parent this class chose, removed at close; null when the test gave its own. */
    private final String cgroupParent;

    private Process process;
    private int starts;

    AgentProcess(Path log, String... args) {
        this.log = log;
        if (List.of(args).contains("--cgroup-parent")) {
            this.cgroupParent = null;
            this.args = List.of(args);
        } else {
            this.cgroupParent = TestCgroups.newName();
            List<String> all = new ArrayList<>(List.of(args));
            all.addAll(List.of("--cgroup-parent", cgroupParent));
            this.args = List.copyOf(all);
        }
    }

    /** Starts the agent and waits until it says it is ready. */
    AgentProcess start() throws IOException, InterruptedException {
        assertThat(JAR).as("built by mvn package in the operator module").exists();
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-jar",
                JAR.toString()));
        command.addAll(args);
        Path out = log.resolveSibling(log.getFileName() + "." + (++starts));
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            String text = Files.exists(out) ? Files.readString(out, StandardCharsets.UTF_8) : "";
            if (text.contains("is ready")) {
                return this;
            }
            if (!process.isAlive()) {
                throw new AssertionError("the agent exited with " + process.exitValue() + ":\n" + text);
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the agent did not get ready in 60 s:\n" + Files.readString(out));
    }

    /** The whole log of the current run. */
    String log() throws IOException {
        return Files.readString(log.resolveSibling(log.getFileName() + "." + starts), StandardCharsets.UTF_8);
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    /** SIGKILL: no shutdown hook runs. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }

    /** SIGTERM, and the exit code. */
    int stop() throws InterruptedException {
        process.destroy();
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("the agent stops on SIGTERM")
                .isTrue();
        return process.exitValue();
    }

    /** The processes this run of the agent started that still run (raw_exec tasks and their supervisors). */
    List<ProcessHandle> descendants() {
        return process == null ? List.of() : process.descendants().toList();
    }

    /**
     * Stops the agent and ends what it started that still runs (raw_exec tasks outlive their agent, by design; a
     * test's teardown must not leave them), by their pids, then removes the cgroups this class chose.
     */
    @Override
    public void close() throws InterruptedException {
        List<ProcessHandle> started = descendants();
        if (process != null && process.isAlive()) {
            stop();
        }
        for (ProcessHandle p : started) {
            p.destroyForcibly();
        }
        for (ProcessHandle p : started) {
            try {
                p.onExit().get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                System.err.println("AgentProcess: process " + p.pid() + " did not end: " + e);
            }
        }
        removeCgroups();
    }

    private void removeCgroups() throws InterruptedException {
        if (cgroupParent != null) {
            TestCgroups.remove(cgroupParent);
        }
    }
}
