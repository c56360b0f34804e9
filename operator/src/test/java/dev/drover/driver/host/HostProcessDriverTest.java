package dev.drover.driver.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The host-process engine with real processes: supervision, reattach, environment, logs. */
class HostProcessDriverTest {

    @TempDir
    Path dir;

    final LogRotator rotator = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
    final HostProcessDriver driver = HostDrivers.plain(rotator);
    final List<TaskHandle> started = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        for (TaskHandle h : started) {
            long pid = h.longState("pid", -1);
            new ProcessBuilder("kill", "-KILL", "--", "-" + pid).start().waitFor(5, TimeUnit.SECONDS);
            // The supervisor writes the exit status after the task dies: let it finish before @TempDir is removed.
            long supervisor = h.longState("supervisorPid", -1);
            await().atMost(Duration.ofSeconds(10))
                    .until(() ->
                            ProcessHandle.of(supervisor).map(p -> !p.isAlive()).orElse(true));
        }
        driver.close();
        rotator.close();
    }

    TaskConfig task(String name, String script, Map<String, String> env) {
        return new TaskConfig(
                "default",
                "alloc",
                name,
                Map.of("command", "/bin/sh", "args", List.of("-c", script)),
                env,
                dir.resolve("alloc"),
                dir.resolve(name),
                dir.resolve("alloc/logs"),
                dir.resolve(name + "/secrets"));
    }

    TaskHandle start(String name, String script) throws Exception {
        Files.createDirectories(dir.resolve(name));
        TaskHandle h = driver.start(task(name, script, Map.of()));
        started.add(h);
        return h;
    }

    @Test
    void theLauncherPrefixesTheSupervisorCommand() throws Exception {
        Path launcher = dir.resolve("launcher.sh");
        Path seen = dir.resolve("launched");
        Files.writeString(launcher, "#!/bin/sh\necho \"$1 $2\" > '" + seen + "'\nshift 2\nexec \"$@\"\n");
        launcher.toFile().setExecutable(true);
        try (HostProcessDriver launched =
                HostDrivers.launched(rotator, List.of(launcher.toString(), "--slice", "drover.slice"))) {
            Files.createDirectories(dir.resolve("t"));
            TaskHandle h = launched.start(task("t", "exit 4", Map.of()));
            started.add(h);
            assertThat(launched.exit(h).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(4));
            assertThat(Files.readString(seen).strip()).isEqualTo("--slice drover.slice");
        }
    }

    /**
     * An agent killed between starting a task and storing its handle: the next agent's start must take over the
     * running task, not start a second copy (it did: both ran, the first one untracked).
     */
    @Test
    void aStartThatWasNeverRecordedIsTakenOverNotRunTwice() throws Exception {
        Path starts = dir.resolve("starts");
        TaskHandle first = start("t", "echo started >> " + starts + "; exec sleep 60");
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(starts));

        TaskHandle second;
        try (HostProcessDriver nextAgent = HostDrivers.plain(rotator)) {
            second = nextAgent.start(task("t", "echo started >> " + starts + "; exec sleep 60", Map.of()));
            assertThat(second.longState("pid", -1)).isEqualTo(first.longState("pid", -2));
            assertThat(nextAgent.stats(second).memoryBytes()).isPositive();

            nextAgent.stop(second, Duration.ofSeconds(2), "SIGTERM");
            assertThat(nextAgent.exit(second).get(10, TimeUnit.SECONDS).exitCode())
                    .isNotZero();
        }
        assertThat(Files.readAllLines(starts)).containsExactly("started");
    }

    /**
     * Both the agent (before it stored the handle) and the task's supervisor died; the task runs on. The next
     * start takes it over by the PID and start time its pid file records, not a second copy (one was started).
     */
    @Test
    void aStartNeverRecordedWhoseSupervisorDiedIsTakenOverNotRunTwice() throws Exception {
        Path starts = dir.resolve("starts");
        TaskHandle first = start("t", "echo started >> " + starts + "; exec sleep 60");
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(starts));
        ProcessHandle supervisor =
                ProcessHandle.of(first.longState("supervisorPid", -1)).orElseThrow();
        supervisor.destroyForcibly();
        supervisor.onExit().get(10, TimeUnit.SECONDS);

        try (HostProcessDriver nextAgent = HostDrivers.plain(rotator)) {
            TaskHandle second = nextAgent.start(task("t", "echo started >> " + starts + "; exec sleep 60", Map.of()));
            assertThat(second.longState("pid", -1)).isEqualTo(first.longState("pid", -2));
            assertThat(second.longState("pidStart", -1)).isEqualTo(first.longState("pidStart", -2));
            nextAgent.stop(second, Duration.ofSeconds(2), "SIGTERM");
            assertThat(nextAgent.exit(second).get(10, TimeUnit.SECONDS).successful())
                    .isFalse();
        }
        assertThat(Procs.isSame(first.longState("pid", -1), first.longState("pidStart", -2)))
                .isFalse();
        assertThat(Files.readAllLines(starts)).containsExactly("started");
    }

    /**
     * The supervisor file records the supervisor's PID with its start time, so a process that got that PID since and
     * names the task's status directory in its command line (any user of the host can) is not taken for the
     * supervisor. It was (only the PID was recorded, and the command line checked): the task was then reported
     * running with nothing running, and never started again.
     */
    @Test
    void aProcessThatGotTheSupervisorsPidSinceIsNotTakenOver() throws Exception {
        Path starts = dir.resolve("starts");
        TaskHandle first = start("t", "echo started >> " + starts);
        assertThat(driver.exit(first).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
        Path status = Path.of(first.state().get("statusDir"));
        String[] recorded =
                Files.readString(status.resolve("supervisor")).trim().split(" ");
        assertThat(recorded).as("the supervisor's PID and start time").hasSize(2);
        assertThat(Long.parseLong(recorded[1])).isEqualTo(first.longState("supervisorStart", -1));

        Process impostor = new ProcessBuilder("sleep", "100", status.toString()).start();
        try {
            // as if the impostor had been given the supervisor's PID: the PID is its own, the start time is not
            Files.writeString(status.resolve("supervisor"), impostor.pid() + " " + recorded[1] + "\n");

            TaskHandle second = driver.start(task("t", "echo started >> " + starts, Map.of()));
            started.add(second);

            assertThat(second.longState("supervisorPid", -1)).isNotEqualTo(impostor.pid());
            assertThat(driver.exit(second).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
            assertThat(Files.readAllLines(starts)).containsExactly("started", "started");
        } finally {
            impostor.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aFinishedEarlierStartIsNotTakenOver() throws Exception {
        Path starts = dir.resolve("starts");
        TaskHandle first = start("t", "echo started >> " + starts);
        assertThat(driver.exit(first).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        Procs.commandLine(first.longState("supervisorPid", -1)).isEmpty());

        TaskHandle again = start("t", "echo started >> " + starts);
        assertThat(driver.exit(again).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
        assertThat(Files.readAllLines(starts)).containsExactly("started", "started");
    }

    @Test
    void reportsTheExitCode() throws Exception {
        TaskHandle h = start("t", "exit 3");
        assertThat(driver.exit(h).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(3));
    }

    @Test
    void killBySignalReportsTheSignal() throws Exception {
        TaskHandle h = start("t", "exec sleep 100");
        driver.stop(h, Duration.ofSeconds(5), "SIGTERM");
        ExitResult r = driver.exit(h).get(10, TimeUnit.SECONDS);
        assertThat(r.signal()).isEqualTo("SIGTERM");
        assertThat(r.exitCode()).isEqualTo(143);
    }

    @Test
    void aProcessIgnoringSigtermIsKilledAfterTheTimeout() throws Exception {
        TaskHandle h = start("t", "trap '' TERM; touch trapped; sleep 100 & wait; sleep 100");
        // start returns once the task's PID is known, maybe before its shell has set the trap
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(dir.resolve("t/trapped")));
        long begin = System.nanoTime();
        driver.stop(h, Duration.ofMillis(300), "SIGTERM");
        assertThat(Duration.ofNanos(System.nanoTime() - begin)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(driver.exit(h).get(10, TimeUnit.SECONDS).signal()).isEqualTo("SIGKILL");
    }

    @Test
    void childrenOfTheTaskAreKilledToo() throws Exception {
        TaskHandle h = start("t", "sleep 1000 & echo $! > child.pid; wait");
        Path childPid = dir.resolve("t/child.pid");
        await().atMost(Duration.ofSeconds(5)).until(() -> Files.exists(childPid) && Files.size(childPid) > 0);
        long child = Long.parseLong(Files.readString(childPid).trim());
        assertThat(ProcessHandle.of(child)).isPresent();
        driver.stop(h, Duration.ofSeconds(5), "SIGTERM");
        await().atMost(Duration.ofSeconds(5))
                .until(() -> ProcessHandle.of(child).map(p -> !p.isAlive()).orElse(true));
    }

    @Test
    void aNewDriverReattachesToTheSameProcessAndLearnsItsExitCode() throws Exception {
        Path fifo = dir.resolve("t/fifo");
        Files.createDirectories(fifo.getParent());
        new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
        TaskHandle h = start("t", "read x < fifo; exit 7");
        driver.close(); // the agent goes away; the task does not
        long pid = h.longState("pid", -1);
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);

        try (LogRotator r2 = new LogRotator(1 << 20, 3, Duration.ofMillis(50))) {
            HostProcessDriver again = HostDrivers.plain(r2);
            TaskHandle recovered = again.recover(h);
            assertThat(recovered.longState("pid", -1)).isEqualTo(pid);
            assertThat(again.exit(recovered)).isNotDone();
            Files.writeString(fifo, "go\n");
            assertThat(again.exit(recovered).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(7));
        }
    }

    /**
     * The supervisor died (here SIGKILLed) while its task ran on. The next agent takes the task over by its PID and
     * start time, learns of its end by watching /proc, and its kill reaches it (it reported the task gone and a
     * second copy was started beside the first).
     */
    @Test
    void aTaskWhoseSupervisorDiedIsTakenOverAndItsKillReachesIt() throws Exception {
        TaskHandle h = start("t", "exec sleep 60");
        long pid = h.longState("pid", -1);
        ProcessHandle supervisor =
                ProcessHandle.of(h.longState("supervisorPid", -1)).orElseThrow();
        supervisor.destroyForcibly();
        supervisor.onExit().get(10, TimeUnit.SECONDS);
        driver.close();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);

        try (LogRotator r2 = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
                HostProcessDriver again = HostDrivers.plain(r2)) {
            TaskHandle recovered = again.recover(h);
            assertThat(recovered.longState("pid", -1)).isEqualTo(pid);
            assertThat(again.exit(recovered)).isNotDone();
            assertThat(again.stats(recovered).memoryBytes()).isPositive();

            again.stop(recovered, Duration.ofSeconds(5), "SIGTERM");
            ExitResult r = again.exit(recovered).get(10, TimeUnit.SECONDS);
            assertThat(r.error()).contains("supervisor");
            assertThat(Procs.isSame(pid, h.longState("pidStart", -2))).isFalse(); // dead, at most not yet reaped
        }
    }

    /** An orphaned task that ends by itself is reported ended, though nobody can learn its exit code. */
    @Test
    void theEndOfATaskWhoseSupervisorDiedIsNoticed() throws Exception {
        Path release = dir.resolve("release");
        TaskHandle h = start("t", "while [ ! -e " + release + " ]; do sleep 0.05; done; exit 4");
        ProcessHandle supervisor =
                ProcessHandle.of(h.longState("supervisorPid", -1)).orElseThrow();
        supervisor.destroyForcibly();
        supervisor.onExit().get(10, TimeUnit.SECONDS);

        try (LogRotator r2 = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
                HostProcessDriver again = HostDrivers.plain(r2)) {
            TaskHandle recovered = again.recover(h);
            assertThat(again.exit(recovered)).isNotDone();
            Files.writeString(release, "");
            ExitResult r = again.exit(recovered).get(10, TimeUnit.SECONDS);
            assertThat(r.successful()).isFalse();
            assertThat(r.error()).contains("exit status is unknown");
        }
    }

    @Test
    void anExitWhileNobodyWatchedIsReadFromTheStatusFile() throws Exception {
        TaskHandle h = start("t", "exit 5");
        driver.exit(h).get(10, TimeUnit.SECONDS);
        try (LogRotator r2 = new LogRotator(1 << 20, 3, Duration.ofMillis(50))) {
            HostProcessDriver again = HostDrivers.plain(r2);
            assertThat(again.exit(again.recover(h)).get(1, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(5));
        }
    }

    @Test
    void aReusedPidIsNotMistakenForTheTask() throws Exception {
        TaskHandle h = start("t", "exec sleep 100");
        Map<String, String> state = new HashMap<>(h.state());
        state.put("supervisorStart", "1"); // same PIDs, another start time: another process
        state.put("pidStart", "1");
        TaskHandle stale = new TaskHandle(h.driver(), "default/alloc/other", h.startedAt(), state);
        try (LogRotator r2 = new LogRotator(1 << 20, 3, Duration.ofMillis(50))) {
            HostProcessDriver again = HostDrivers.plain(r2);
            assertThatThrownBy(() -> again.recover(stale))
                    .isInstanceOf(DriverException.class)
                    .hasMessageContaining("is gone");
        }
    }

    @Test
    void environmentAndOutputReachTheTask() throws Exception {
        Files.createDirectories(dir.resolve("t"));
        TaskHandle h = driver.start(task(
                "t",
                "echo \"$DROVER_TASK_NAME $GREETING\"; echo oops >&2",
                Map.of("DROVER_TASK_NAME", "t", "GREETING", "hello")));
        started.add(h);
        driver.exit(h).get(10, TimeUnit.SECONDS);
        assertThat(Files.readString(dir.resolve("alloc/logs/t.stdout.0"))).isEqualTo("t hello\n");
        assertThat(Files.readString(dir.resolve("alloc/logs/t.stderr.0"))).isEqualTo("oops\n");
    }

    TaskHandle startCommand(HostProcessDriver d, String command, List<String> args, Map<String, String> env)
            throws Exception {
        Files.createDirectories(dir.resolve("t"));
        TaskHandle h = d.start(new TaskConfig(
                "default",
                "alloc",
                "t",
                Map.of("command", command, "args", args),
                env,
                dir.resolve("alloc"),
                dir.resolve("t"),
                dir.resolve("alloc/logs"),
                dir.resolve("t/secrets")));
        started.add(h);
        return h;
    }

    /** The task's environment as {@code env -0} printed it to its stdout. */
    Map<String, String> printedEnvironment() throws Exception {
        Map<String, String> env = new HashMap<>();
        for (String entry :
                Files.readString(dir.resolve("alloc/logs/t.stdout.0")).split("\0")) {
            if (!entry.isEmpty()) {
                env.put(entry.substring(0, entry.indexOf('=')), entry.substring(entry.indexOf('=') + 1));
            }
        }
        return env;
    }

    /** The task sees PATH, HOME and its own variables, and nothing of the agent's (it saw the JVM's whole env). */
    @Test
    void theTaskSeesOnlyItsDocumentedEnvironment() throws Exception {
        TaskHandle h = startCommand(
                driver, "/usr/bin/env", List.of("-0"), Map.of("DROVER_TASK_NAME", "t", "GREETING", "hello"));
        assertThat(driver.exit(h).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
        assertThat(printedEnvironment())
                .isEqualTo(Map.of(
                        "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                        "HOME", dir.resolve("t").toString(),
                        "DROVER_TASK_NAME", "t",
                        "GREETING", "hello"));
    }

    /** What the agent's side adds before the supervisor (here a launcher setting a variable) stays there. */
    @Test
    void theAgentsVariablesNeverReachTheTask() throws Exception {
        try (HostProcessDriver launched = HostDrivers.launched(
                rotator, List.of("/usr/bin/env", "AGENT_SECRET=leaked", "HTTPS_PROXY=http://proxy:3128"))) {
            TaskHandle h = startCommand(launched, "/usr/bin/env", List.of("-0"), Map.of("GREETING", "hello"));
            assertThat(launched.exit(h).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
        }
        assertThat(printedEnvironment())
                .containsEntry("GREETING", "hello")
                .doesNotContainKeys("AGENT_SECRET", "HTTPS_PROXY");
    }

    /** The supervisor's mv and setsid are not looked up through the task's PATH (the task never started). */
    @Test
    void aTaskPathThatFindsNothingStillStartsAnAbsoluteCommand() throws Exception {
        TaskHandle h = startCommand(
                driver, "/bin/sh", List.of("-c", "echo \"$PATH\"; exit 3"), Map.of("PATH", "/nonexistent"));
        assertThat(driver.exit(h).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(3));
        assertThat(Files.readString(dir.resolve("alloc/logs/t.stdout.0"))).isEqualTo("/nonexistent\n");
    }

    /** The task's LD_PRELOAD and other variables are the task's alone: the supervisor runs without them. */
    @Test
    void theTasksVariablesNeverEnterTheSupervisor() throws Exception {
        TaskHandle h = startCommand(
                driver, "/bin/sleep", List.of("60"), Map.of("LD_PRELOAD", "/nonexistent.so", "GREETING", "hello"));
        String supervisor = Files.readString(Path.of("/proc", h.state().get("supervisorPid"), "environ"));
        assertThat(supervisor.split("\0"))
                .containsExactly("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        Path task = Path.of("/proc", h.state().get("pid"), "environ"); // the launching shell's until it execs
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(Files.readString(task).split("\0"))
                        .contains("LD_PRELOAD=/nonexistent.so", "GREETING=hello"));
        assertThat(driver.stats(h).memoryBytes()).isPositive();
    }

    /** Values reach the task byte for byte and none runs as code on the way (the launch file is shell). */
    @Test
    void anEnvironmentValueCannotInjectIntoTheLaunch() throws Exception {
        Path pwned = dir.resolve("pwned");
        String hostile = "a'b\"c\n$(touch " + pwned + ")`touch " + pwned + "`'; touch " + pwned + "; echo '\\";
        TaskHandle h = startCommand(driver, "/usr/bin/env", List.of("-0"), Map.of("HOSTILE", hostile));
        assertThat(driver.exit(h).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
        assertThat(printedEnvironment()).containsEntry("HOSTILE", hostile);
        assertThat(pwned).doesNotExist();
    }

    @Test
    void aVariableNameThatIsNoIdentifierIsRefused() {
        assertThatThrownBy(() -> startCommand(driver, "/bin/true", List.of(), Map.of("A=B; touch x", "1")))
                .isInstanceOfSatisfying(DriverStartException.class, e -> {
                    assertThat(e.recoverable()).isFalse();
                    assertThat(e).hasMessageContaining("'A=B; touch x' is not a shell identifier");
                });
    }

    /** Logs may show a task's secrets: 0640 at most, set by the driver whatever the umask of whoever writes. */
    @Test
    void taskLogsAreReadableByOwnerAndGroupOnlyWhateverTheUmask() throws Exception {
        try (LogRotator small = new LogRotator(16, 3, Duration.ofHours(1));
                HostProcessDriver permissive = HostDrivers.launched(
                        small, List.of("/bin/sh", "-c", "umask 0; exec \"$@\"", "permissive-umask"))) {
            TaskHandle h = startCommand(
                    permissive,
                    "/bin/sh",
                    List.of("-c", "echo a line longer than sixteen bytes;" + " echo oops >&2"),
                    Map.of());
            assertThat(permissive.exit(h).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
            Path logs = dir.resolve("alloc/logs");
            small.rotateIfFull(logs.resolve("t.stdout.0"));
            for (String log : List.of("t.stdout.0", "t.stdout.1", "t.stderr.0")) {
                assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
                                Files.getPosixFilePermissions(logs.resolve(log))))
                        .as(log)
                        .isEqualTo("rw-r-----");
            }
        }
    }

    @Test
    void logsAreRotatedBySizeKeepingNFiles() throws Exception {
        try (LogRotator small = new LogRotator(1024, 3, Duration.ofMillis(20))) {
            HostProcessDriver d = HostDrivers.plain(small);
            Files.createDirectories(dir.resolve("t"));
            TaskHandle h = d.start(task(
                    "t",
                    "i=0; while [ $i -lt 400 ]; do echo line-$i-xxxxxxxxxxxxxxxxxxxx; i=$((i+1)); sleep 0.002; done",
                    Map.of()));
            started.add(h);
            d.exit(h).get(30, TimeUnit.SECONDS);
            small.rotateIfFull(dir.resolve("alloc/logs/t.stdout.0"));
            Path logs = dir.resolve("alloc/logs");
            assertThat(logs.resolve("t.stdout.1")).exists();
            assertThat(logs.resolve("t.stdout.2")).exists();
            assertThat(logs.resolve("t.stdout.3")).doesNotExist();
            for (String f : List.of("t.stdout.0", "t.stdout.1", "t.stdout.2")) {
                assertThat(Files.size(logs.resolve(f))).isLessThan(4096);
            }
        }
    }

    @Test
    void statsReadTheProcessTree() throws Exception {
        TaskHandle h = start("t", "exec sleep 100");
        var stats = driver.stats(h);
        assertThat(stats.memoryBytes()).isPositive();
        assertThat(stats.cpuTime().isNegative()).isFalse();
    }
}
