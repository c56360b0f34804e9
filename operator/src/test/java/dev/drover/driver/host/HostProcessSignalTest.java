package dev.drover.driver.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
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

/** Signals sent to running host-process tasks (a template change's SIGHUP, {@code kubectl drover signal}), real processes. */
class HostProcessSignalTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    final LogRotator rotator = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
    final HostProcessDriver driver = HostDrivers.plain(rotator);
    final List<TaskHandle> started = new ArrayList<>();
    final List<Process> others = new ArrayList<>();

    @AfterEach
    void endWhatWeStarted() throws Exception {
        for (Process p : others) {
            p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        for (TaskHandle h : started) {
            long pid = h.longState("pid", -1);
            new ProcessBuilder("kill", "-KILL", "--", "-" + pid).start().waitFor(5, TimeUnit.SECONDS);
            long supervisor = h.longState("supervisorPid", -1);
            await().atMost(TIMEOUT)
                    .until(() ->
                            ProcessHandle.of(supervisor).map(p -> !p.isAlive()).orElse(true));
        }
        driver.close();
        rotator.close();
    }

    private TaskHandle start(String name, String script) throws Exception {
        Files.createDirectories(dir.resolve(name));
        TaskHandle h = driver.start(new TaskConfig(
                "default",
                "alloc",
                name,
                Map.of("command", "/bin/sh", "args", List.of("-c", script)),
                Map.of(),
                dir.resolve("alloc"),
                dir.resolve(name),
                dir.resolve("alloc/logs"),
                dir.resolve(name + "/secrets")));
        started.add(h);
        return h;
    }

    /**
     * A shell whose traps append {@code hup} or {@code usr1} to {@code file}, once it has written its PID to
     * {@code ready}. Of two pending signals the lower one is handled first, so a SIGHUP sent before a SIGUSR1 would
     * come first in the file.
     */
    private static String trapping(Path file, Path ready) {
        return "trap 'echo hup >> " + file + "' HUP; trap 'echo usr1 >> " + file + "' USR1; echo $$ > " + ready
                + "; while :; do sleep 0.05; done";
    }

    private static void kill(String signal, long pid) throws Exception {
        new ProcessBuilder("kill", "-s", signal, "--", Long.toString(pid))
                .start()
                .waitFor(5, TimeUnit.SECONDS);
    }

    private static void awaitLines(Path file, int n) {
        await().atMost(TIMEOUT)
                .until(() -> Files.exists(file) && Files.readAllLines(file).size() >= n);
    }

    @Test
    void aTaskTrappingSighupRunsItsTrapOnEverySignalAndLivesOn() throws Exception {
        Path reloads = dir.resolve("reloads");
        Path ready = dir.resolve("ready");
        TaskHandle h = start("t", trapping(reloads, ready));
        awaitLines(ready, 1); // start returns once the PID is known, maybe before the trap is set

        driver.signal(h, "SIGHUP");
        awaitLines(reloads, 1);
        driver.signal(h, "SIGHUP");
        awaitLines(reloads, 2);

        assertThat(Files.readAllLines(reloads)).containsExactly("hup", "hup");
        assertThat(driver.exit(h)).isNotDone();
    }

    /** Only the task's own process gets it, as from {@code kill PID}: its children are its business. */
    @Test
    void theSignalGoesToTheTasksOwnProcessNotItsChildren() throws Exception {
        Path parent = dir.resolve("parent");
        Path child = dir.resolve("child");
        Path childPid = dir.resolve("child.pid");
        Path ready = dir.resolve("ready");
        Path childScript = Files.writeString(dir.resolve("child.sh"), trapping(child, childPid));
        TaskHandle h = start("t", "/bin/sh " + childScript + " & " + trapping(parent, ready));
        awaitLines(ready, 1);
        awaitLines(childPid, 1);

        driver.signal(h, "SIGHUP");
        awaitLines(parent, 1);
        // The child is in the task's process group: a signal to the group would be in its file before this one.
        kill("USR1", Long.parseLong(Files.readString(childPid).trim()));
        awaitLines(child, 1);
        assertThat(Files.readAllLines(child)).containsExactly("usr1");
        assertThat(Files.readAllLines(parent)).containsExactly("hup");
    }

    @Test
    void aSignalTheTaskDoesNotHandleEndsItAsThatSignal() throws Exception {
        TaskHandle h = start("t", "exec sleep 100");
        driver.signal(h, "SIGUSR1");
        assertThat(driver.exit(h).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                .isEqualTo(ExitResult.signalled("SIGUSR1"));
    }

    @Test
    void aTaskThatExitedIsNotSignalled() throws Exception {
        TaskHandle h = start("t", "exit 0");
        driver.exit(h).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThatThrownBy(() -> driver.signal(h, "SIGHUP"))
                .isInstanceOf(TaskNotRunningException.class)
                .hasMessage("task default/alloc/t is not running: it has exited");
    }

    @Test
    void aTaskThisAgentDoesNotWatchIsNotSignalled() throws Exception {
        TaskHandle h = start("t", "exec sleep 100");
        try (HostProcessDriver other = HostDrivers.plain(rotator)) {
            assertThatThrownBy(() -> other.signal(h, "SIGHUP"))
                    .isInstanceOf(TaskNotRunningException.class)
                    .hasMessageContaining("recover it first");
        }
        assertThat(driver.exit(h)).isNotDone();
    }

    /**
     * The task's PID now names another process (the task ended unseen and the kernel reused its PID): that process
     * is never signalled, since its start time is not the task's.
     */
    @Test
    void aReusedPidIsNeverSignalled() throws Exception {
        TaskHandle h = start("t", "exec sleep 100");
        Path hits = dir.resolve("hits");
        Path ready = dir.resolve("bystander-ready");
        Process bystander = new ProcessBuilder("/bin/sh", "-c", trapping(hits, ready)).start();
        others.add(bystander);
        awaitLines(ready, 1);
        Map<String, String> state = new HashMap<>(h.state());
        state.put("pid", Long.toString(bystander.pid()));
        long realStart = Procs.startTime(bystander.pid()).orElseThrow();
        state.put("pidStart", Long.toString(realStart - 1)); // the PID of the task's record, another process now
        TaskHandle reused = new TaskHandle(h.driver(), h.taskId(), h.startedAt(), state);

        assertThatThrownBy(() -> driver.signal(reused, "SIGHUP"))
                .isInstanceOf(TaskNotRunningException.class)
                .hasMessageContaining("has exited");
        kill("USR1", bystander.pid()); // a SIGHUP sent before would be in the file first
        awaitLines(hits, 1);
        assertThat(Files.readAllLines(hits)).containsExactly("usr1");
    }
}
