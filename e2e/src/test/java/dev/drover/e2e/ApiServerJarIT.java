package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped jars, run as a user runs them: {@code java -jar localcluster/target/drover-local.jar apiserver}, and the
 * load harness {@code java -jar benchmarks/target/drover-bench.jar}, which starts it.
 */
class ApiServerJarIT {

    static final Path JAR = Path.of("..", "localcluster", "target", "drover-local.jar");

    /** The load harness, which starts that jar's API server from its own copy of it. */
    static final Path BENCH_JAR = Path.of("..", "benchmarks", "target", "drover-bench.jar");

    @TempDir
    Path dir;

    static Process java(String... args) throws Exception {
        return javaCommand(args).start();
    }

    /** {@code java -jar drover-local.jar ARGS}, to start once its output is set up. */
    static ProcessBuilder javaCommand(String... args) {
        return jarCommand(JAR, args);
    }

    /** {@code java -jar drover-bench.jar ARGS}, to start once its output is set up. */
    static ProcessBuilder benchJarCommand(String... args) {
        return jarCommand(BENCH_JAR, args);
    }

    private static ProcessBuilder jarCommand(Path jar, String... args) {
        assertThat(jar).as("built by mvn package").exists();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new java.util.ArrayList<>(List.of(java, "-jar", jar.toString()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command);
    }

    /** The first line of {@code out} containing {@code text}, or null when the stream ends first. */
    static String lineContaining(BufferedReader out, String text, Duration timeout) throws Exception {
        return CompletableFuture.supplyAsync(() -> {
                    try {
                        for (String line; (line = out.readLine()) != null; ) {
                            if (line.contains(text)) {
                                return line;
                            }
                        }
                        return null;
                    } catch (Exception e) {
                        return null;
                    }
                })
                .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void apiserverPrintsReadyServesKubectlAndExitsZeroOnSigterm() throws Exception {
        Path kubeconfig = dir.resolve("nested/kubeconfig");
        Process server = java("apiserver", "--kubeconfig", kubeconfig.toString(), "--nodes", "local");
        try {
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
            String ready = lineContaining(out, "ready", Duration.ofSeconds(60));
            assertThat(ready).contains("ready at https://127.0.0.1:");
            assertThat(Files.readString(kubeconfig)).contains("current-context: drover-local");

            Kubectl kubectl = new Kubectl(kubeconfig);
            assertThat(kubectl.run("get", "nodes", "-o", "name").assertOk().out())
                    .contains("node/local");
            assertThat(kubectl.run("get", "alloc").assertOk().err()).contains("No resources found");

            server.destroy(); // SIGTERM
            assertThat(server.waitFor(30, TimeUnit.SECONDS))
                    .as("stops on SIGTERM")
                    .isTrue();
            assertThat(server.exitValue()).isZero();
        } finally {
            server.destroyForcibly();
        }
    }

    @Test
    void badArgumentsPrintUsageAndExitTwo() throws Exception {
        Process p = java("apiserver", "--port", "http");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(2);
        assertThat(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8))
                .contains("drover-local: --port \"http\" is not a port number", "usage: drover-local apiserver");

        Process up = java("up", "--kubeconfig", dir.resolve("k").toString(), "--kube-version", "1.24");
        assertThat(up.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(up.exitValue()).isEqualTo(2);
        assertThat(new String(up.getErrorStream().readAllBytes(), StandardCharsets.UTF_8))
                .contains("--kube-version: Kubernetes 1.24 is not one this server acts as: 1.25 to 1.36");
    }

    /**
     * The README's quick start as written, on a machine whose default java is older than 25 (JDK 25 in
     * JAVA_HOME): {@code bin/drover-local up}, then kubectl apply of examples/hello.yaml runs it, and the
     * {@code kubectl drover} plugin reads it.
     */
    @Test
    void quickStartRunsWithAnOlderJavaFirstOnPath() throws Exception {
        assertThat(JAR).as("built by mvn package").exists();
        Path kubeconfig = dir.resolve(".drover-local/kubeconfig");
        ProcessBuilder command = new ProcessBuilder(
                Path.of("..", "bin", "drover-local").toString(),
                "up",
                "--kubeconfig",
                kubeconfig.toString(),
                "--data-dir",
                dir.resolve("data").toString());
        OldJava.apply(command.environment());
        String cgroupParent = TestCgroups.newName();
        command.environment().put("DROVER_CGROUP_PARENT", cgroupParent);
        Process up = command.redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(up.getInputStream(), StandardCharsets.UTF_8));
            String ready = lineContaining(out, "drover-local ready", Duration.ofSeconds(90));
            assertThat(ready).contains("agent for node \"local\"", "/metrics", "API https://127.0.0.1:");
            CompletableFuture.runAsync(() -> {
                try {
                    out.transferTo(java.io.Writer.nullWriter()); // keep the pipe drained
                } catch (Exception ignored) {
                    // the process ended
                }
            });

            Kubectl kubectl = new Kubectl(kubeconfig);
            kubectl.run("apply", "-f", Path.of("..", "examples", "hello.yaml").toString())
                    .assertOk();
            kubectl.waitForClientStatus("hello", "Running", Duration.ofSeconds(30));
            assertThat(kubectl.run("get", "alloc", "hello").assertOk().out())
                    .containsPattern("hello\\s+local\\s+Running\\s+1/1");
            var logs = kubectl.plugin(Path.of("..", "operator", "bin"), "drover", "logs", "hello", "web");
            assertThat(logs.out()).as(logs.err()).startsWith("hello from drover");
            var stats = kubectl.plugin(Path.of("..", "operator", "bin"), "drover", "stats", "hello");
            assertThat(stats.out()).as(stats.err()).containsPattern("(?m)^web +Running +[0-9.]+ %");
            var status = kubectl.plugin(Path.of("..", "operator", "bin"), "drover", "status", "hello");
            assertThat(status.out()).as(status.err()).contains("Task \"web\"", "is \"Running\"");

            up.destroy(); // SIGTERM
            assertThat(up.waitFor(60, TimeUnit.SECONDS)).as("stops on SIGTERM").isTrue();
            assertThat(up.exitValue()).isZero();
        } finally {
            up.destroyForcibly();
            up.waitFor(30, TimeUnit.SECONDS);
            TestCgroups.remove(cgroupParent);
        }
    }

    @Test
    void benchPrintsOneJsonLineWithTheDocumentedKeys() throws Exception {
        Path timeline = dir.resolve("timeline.csv");
        String out = bench(
                "--allocs",
                "5",
                "--tasks",
                "2",
                "--restart",
                "--agent-jar",
                Path.of("..", "operator", "target", "drover-agent.jar").toString(),
                "--timeline",
                timeline.toString());
        var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.strip());
        for (String key : List.of(
                "allocs",
                "tasksPerAlloc",
                "allRunningSeconds",
                "p50Seconds",
                "p99Seconds",
                "statusWrites",
                "stateChanges",
                "heapBytesPerAlloc",
                "restoreSeconds",
                "restartsAfterRestore")) {
            assertThat(json.has(key)).as(key).isTrue();
        }
        assertThat(json.get("allocs").asInt()).isEqualTo(5);
        assertThat(json.get("stateChanges").asLong())
                .isGreaterThanOrEqualTo(30); // 5 x 2 x (Received, TaskSetup, Started)
        assertThat(json.get("restartsAfterRestore").asLong()).isZero();
        List<String> lines = java.nio.file.Files.readAllLines(timeline);
        assertThat(lines.getFirst()).isEqualTo("name,createdMs,receivedMs,startedMs,runningMs");
        assertThat(lines).hasSize(6);
        assertThat(lines.subList(1, 6)).allMatch(l -> l.matches("bench-[0-4](,-?[0-9]+){4}"), "every time known");
        try (var kept = Files.list(dir)) {
            assertThat(kept.map(p -> p.getFileName().toString()))
                    .as("the bench's directory, in the test's so that it goes with it")
                    .anyMatch(name -> name.startsWith("drover-bench"));
        }
    }

    /**
     * What the image build runs (operator/Dockerfile): a training run whose agent records its AOT cache as it exits,
     * which the agent's JVM, started as the image starts it, then maps ({@code -XX:AOTMode=on} fails when it cannot).
     */
    @Test
    void aTrainingRunRecordsAnAotCacheThatTheAgentStartsWith() throws Exception {
        Path jar = Files.copy(Path.of("..", "operator", "target", "drover-agent.jar"), dir.resolve("drover-agent.jar"));
        Path options = Path.of("..", "operator", "src", "main", "resources", "META-INF", "drover", "agent.options");
        Path cache = dir.resolve("drover-agent.aot");
        bench(
                "--allocs",
                "3",
                "--tasks",
                "1",
                "--delete",
                "--agent-jar",
                jar.toString(),
                "--aot-out",
                cache.toString());
        assertThat(cache).isRegularFile();
        assertThat(Files.size(cache)).isGreaterThan(1 << 20);

        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process agent = new ProcessBuilder(
                        java,
                        "@" + options,
                        "-XX:MaxRAM=256m", // a pod's small memory limit: another heap than the training's
                        "-XX:AOTMode=on",
                        "-XX:AOTCache=" + cache,
                        "-jar",
                        jar.toString(),
                        "--help")
                .redirectErrorStream(true)
                .start();
        String help = new String(agent.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(agent.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(agent.exitValue()).as(help).isZero();
        assertThat(help).doesNotContain("[error][aot]");
    }

    @Test
    void benchWithRawExecMeasuresTheSupervisorsAndLeavesNoProcessOrCgroup() throws Exception {
        Set<Long> sleepsBefore = benchSleeps();
        Set<Path> cgroupsBefore = benchCgroups();
        Process bench = inTestDir(benchJarCommand(
                        "--allocs",
                        "2",
                        "--tasks",
                        "2",
                        "--driver",
                        "raw_exec",
                        "--agent-jar",
                        Path.of("..", "operator", "target", "drover-agent.jar").toString()))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(bench.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(bench.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(bench.exitValue()).as(out).isZero();
        var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.strip());
        assertThat(json.get("stateChanges").asLong())
                .isGreaterThanOrEqualTo(12); // 2 x 2 x (Received, TaskSetup, Started)
        assertThat(json.get("agentCpuSeconds").asDouble()).isPositive();
        assertThat(json.get("apiServerCpuSeconds").asDouble()).isPositive();
        assertThat(json.get("benchCpuSeconds").asDouble()).isPositive();
        // a supervisor costs some pages of its own, and far less than the 1 MiB a task's supervisor may cost
        assertThat(json.get("supervisorPssBytesPerTask").asLong()).isBetween(4_096L, 1_048_576L);
        assertThat(benchSleeps()).as("task processes left running").isSubsetOf(sleepsBefore);
        assertThat(benchCgroups()).as("cgroups left behind").isSubsetOf(cgroupsBefore);
    }

    /**
     * A bench stopped with SIGTERM (a CI timeout, {@code kill}) takes down what it started: its light JVM, the API
     * server and the agent. They outlived it before, the agent still running its allocations.
     */
    @Test
    void aBenchStoppedWithSigtermLeavesNoProcessBehind() throws Exception {
        String cgroupParent = TestCgroups.newName();
        Process bench = benchCommand(
                        cgroupParent,
                        "--allocs",
                        "2",
                        "--tasks",
                        "1",
                        "--steady",
                        "300",
                        "--agent-jar",
                        Path.of("..", "operator", "target", "drover-agent.jar").toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        List<ProcessHandle> started = List.of();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (System.nanoTime() < deadline && started.stream().noneMatch(ApiServerJarIT::isAgent)) {
                Thread.sleep(200);
                started = bench.descendants().toList();
            }
            assertThat(started).as("the bench's agent started").anyMatch(ApiServerJarIT::isAgent);

            bench.destroy();
            assertThat(bench.waitFor(60, TimeUnit.SECONDS)).isTrue();
            long gone = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < gone && started.stream().anyMatch(ProcessHandle::isAlive)) {
                Thread.sleep(200);
            }
            assertThat(started.stream().filter(ProcessHandle::isAlive))
                    .as("processes the bench started, still running")
                    .isEmpty();
        } finally {
            started.forEach(ProcessHandle::destroyForcibly);
            bench.destroyForcibly();
            TestCgroups.remove(cgroupParent);
        }
    }

    /** Whether {@code p} runs {@code java ... -jar .../drover-agent.jar} (the bench's own command line names it too). */
    private static boolean isAgent(ProcessHandle p) {
        List<String> args = List.of(p.info().arguments().orElse(new String[0]));
        int jar = args.indexOf("-jar");
        return jar >= 0 && jar + 1 < args.size() && args.get(jar + 1).endsWith("drover-agent.jar");
    }

    /**
     * Runs {@code bench ARGS} to its end (at most three minutes), its agents' cgroups below a test cgroup removed
     * after; asserts it exits 0 and returns its output.
     */
    private String bench(String... args) throws Exception {
        String cgroupParent = TestCgroups.newName();
        Process bench = benchCommand(cgroupParent, args).start();
        String out = new String(bench.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        boolean ended = bench.waitFor(180, TimeUnit.SECONDS);
        TestCgroups.remove(cgroupParent);
        assertThat(ended).isTrue();
        assertThat(bench.exitValue()).as(out).isZero();
        return out;
    }

    /** {@code drover-bench ARGS}, its agents' cgroups below {@code cgroupParent}, its standard error discarded. */
    private ProcessBuilder benchCommand(String cgroupParent, String... args) {
        ProcessBuilder builder = inTestDir(benchJarCommand(args)).redirectError(ProcessBuilder.Redirect.DISCARD);
        builder.environment().put("DROVER_CGROUP_PARENT", cgroupParent); // the bench's agents inherit it
        return builder;
    }

    /**
     * {@code java} with its temporary directory in this test's: the bench keeps its own there (the API server's and
     * the agent's data and logs, kept for the user to read), which JUnit then removes.
     */
    private ProcessBuilder inTestDir(ProcessBuilder java) {
        java.command().add(1, "-Djava.io.tmpdir=" + dir);
        return java;
    }

    /** The PIDs of processes running {@code /bin/sleep 3600}, the bench's raw_exec task. */
    private static Set<Long> benchSleeps() {
        return ProcessHandle.allProcesses()
                .filter(p -> {
                    try {
                        return Files.readString(Path.of("/proc", Long.toString(p.pid()), "cmdline"))
                                .equals(String.join("\0", "/bin/sleep", "3600", "")); // NUL-separated argv
                    } catch (java.io.IOException e) {
                        return false; // gone, or not ours
                    }
                })
                .map(ProcessHandle::pid)
                .collect(Collectors.toSet());
    }

    /** The cgroup directories named drover-bench-* on this machine. */
    private static Set<Path> benchCgroups() throws Exception {
        Path root = Path.of("/sys/fs/cgroup");
        if (!Files.isDirectory(root)) {
            return Set.of();
        }
        try (Stream<Path> dirs = Files.find(
                root,
                6,
                (path, attributes) -> attributes.isDirectory()
                        && path.getFileName().toString().startsWith("drover-bench-"))) {
            return dirs.collect(Collectors.toSet());
        }
    }
}
