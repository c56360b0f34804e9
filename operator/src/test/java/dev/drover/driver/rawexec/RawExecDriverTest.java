package dev.drover.driver.rawexec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskResources;
import dev.drover.driver.host.LogRotator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What raw_exec is besides the host-process engine it shares with exec: its name, its config, the handles its tasks
 * are recorded by (which a later agent must still read), and tasks that run on the host as the agent's user or as
 * their own, in no namespace of their own.
 */
class RawExecDriverTest {

    @TempDir
    Path dir;

    final LogRotator rotator = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
    final RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator);
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

    TaskConfig task(String name, String user, String script) throws IOException {
        Path taskDir = Files.createDirectories(dir.resolve(name));
        return new TaskConfig(
                "default",
                "alloc",
                name,
                Map.of("command", "/bin/sh", "args", List.of("-c", script)),
                Map.of("DROVER_TASK_DIR", taskDir.toString()),
                dir.resolve("alloc"),
                taskDir,
                dir.resolve("alloc/logs"),
                taskDir.resolve("secrets"),
                TaskResources.NONE,
                user);
    }

    /**
     * A handle is what the state store keeps of a task: its driver's name and these facts, as agents before this one
     * recorded them. A later agent's raw_exec must find the task again from exactly those.
     */
    @Test
    void aHandleAsEarlierAgentsRecordedItIsRecoveredByALaterAgent() throws Exception {
        Path fifo = Files.createDirectories(dir.resolve("t")).resolve("fifo");
        new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
        TaskHandle h = driver.start(task("t", null, "read x < fifo; exit 7"));
        started.add(h);

        assertThat(h.driver()).isEqualTo("raw_exec");
        assertThat(h.state())
                .containsOnlyKeys(
                        "pid", "pidStart", "supervisorPid", "supervisorStart", "statusDir", "stdout", "stderr")
                .containsEntry("statusDir", dir.resolve("t/.drover-raw-exec").toString())
                .containsEntry("stdout", dir.resolve("alloc/logs/t.stdout.0").toString());
        driver.close(); // the agent goes away; the task does not

        TaskHandle stored = new TaskHandle("raw_exec", h.taskId(), h.startedAt(), Map.copyOf(h.state()));
        try (LogRotator r2 = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
                RawExecDriver nextAgent = new RawExecDriver(Clock.systemUTC(), r2)) {
            TaskHandle recovered = nextAgent.recover(stored);
            assertThat(nextAgent.exit(recovered)).isNotDone();
            Files.writeString(fifo, "go\n");
            assertThat(nextAgent.exit(recovered).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(7));
        }
    }

    /** A task with a {@code user} runs as that user, owns its secrets, and shares the agent's PID namespace. */
    @Test
    void aTaskWithAUserRunsAsThatUserAndOwnsItsSecrets() throws Exception {
        assumeTrue(isRoot(), "switching to another user needs root");
        TaskConfig t = task("raw", "daemon", "echo \"$(id -un) $(id -G) $DROVER_TASK_DIR\"; echo $PPID");
        TaskHandle h = driver.start(t);
        started.add(h);
        ExitResult exit = driver.exit(h).get(20, TimeUnit.SECONDS);

        assertThat(exit.exitCode()).isZero();
        assertThat(Files.readString(t.stdout()))
                .startsWith("daemon 1 " + t.taskDir() + "\n")
                .as("no PID namespace for raw_exec")
                .doesNotEndWith("\n1\n");
        assertThat(Files.getAttribute(t.secretsDir(), "unix:uid", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(1);
    }

    @Test
    void aMissingCommandIsAnUnrecoverableStartError() {
        TaskConfig t = new TaskConfig(
                "default",
                "alloc",
                "t",
                Map.of("command", "bin/nope"),
                Map.of(),
                dir,
                dir.resolve("t"),
                dir.resolve("logs"),
                dir.resolve("t/secrets"));
        assertThatThrownBy(() -> driver.start(t)).isInstanceOfSatisfying(DriverStartException.class, e -> {
            assertThat(e.recoverable()).isFalse();
            assertThat(e).hasMessageContaining("does not exist or is not executable");
        });
    }

    @Test
    void configIsValidatedStrictly() {
        assertThat(driver.name()).isEqualTo("raw_exec");
        assertThat(driver.validate(Map.of("comand", "/bin/true")))
                .containsExactly(
                        "config.command: is required (an absolute path, or one relative to the task directory)",
                        "config.comand: unknown key (known: command, args)");
        assertThat(driver.validate(Map.of("command", "/bin/true", "args", "x")))
                .containsExactly("config.args: \"x\" is not a list of strings");
    }

    private static boolean isRoot() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0;
        } catch (IOException e) {
            return false;
        }
    }
}
