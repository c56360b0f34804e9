package dev.drover.driver.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.cgroups.Cgroup;
import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import dev.drover.cgroups.ProcessControl;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.TaskHandle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cgroup of a command run in a task ({@code drover-exec-*}) is killed before it is removed, and is removed
 * whatever the closing thread's interrupt status. The cgroups are a fake v2 tree in a temporary directory whose
 * "kernel" is this test's {@link ProcessControl}: it signals nothing, it drops a killed PID from the tree.
 */
class ExecCgroupCleanupTest {

    @TempDir
    Path root;

    private final List<Long> killed = new ArrayList<>();
    private final List<Process> started = new ArrayList<>();
    private long now;
    private Cgroup task;

    private final ProcessControl kernel = new ProcessControl() {
        @Override
        public void kill(long pid) {
            killed.add(pid);
            dies(pid);
        }

        @Override
        public void pause(Duration pause) {
            now += pause.toNanos();
        }

        @Override
        public long nanoTime() {
            return now;
        }
    };

    @BeforeEach
    void aTaskCgroupInAFakeTree() throws IOException {
        write("proc/self/mountinfo", "31 22 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
        write("proc/self/cgroup", "0::/agent\n");
        write("sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n");
        Files.createDirectories(root.resolve("sys/fs/cgroup/agent"));
        task = Cgroups.detect(root, kernel).create(CgroupParent.own(), "task");
    }

    @AfterEach
    void endWhatWeStarted() throws InterruptedException {
        Thread.interrupted(); // a failed test must not leave the interrupt to the next
        for (Process p : started) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aCommandWhoseStartFailsAfterItJoinedItsCgroupIsKilledBeforeTheCgroupIsRemoved() throws Exception {
        TaskHandle handle = aTaskThatIsThisProcess();

        assertThatThrownBy(() -> TaskExec.start(
                        handle, new ExecRequest(List.of("true"), false, false), 0, Optional.of(task), pb -> {
                            write(
                                    commandCgroup().resolve("cgroup.procs"),
                                    "4242\n"); // it joined, then the start failed
                            throw new IOException("injected");
                        }))
                .isInstanceOf(DriverException.class)
                .hasMessageContaining("injected");

        assertThat(killed).containsExactly(4242L);
        assertThat(task.childNames()).as("the command's cgroup").isEmpty();
    }

    @Test
    void closeOnAnInterruptedThreadStillKillsAndRemovesTheCommandsCgroupAndKeepsTheInterrupt() throws Exception {
        Process command = new ProcessBuilder("setsid", "sleep", "60").start();
        started.add(command);
        Cgroup session = task.createChild("drover-exec-0123456789abcdef");
        write(session.directories().getFirst().resolve("cgroup.procs"), command.pid() + "\n");
        HostExecProcess exec =
                new HostExecProcess(command, Optional.empty(), Optional.empty(), false, Optional.of(session));

        Thread.currentThread().interrupt(); // as when the caller is cancelled, or a pool shuts down
        exec.close();

        assertThat(Thread.interrupted())
                .as("the interrupt, kept for the caller")
                .isTrue();
        assertThat(killed).containsExactly(command.pid());
        assertThat(session.directories().getFirst()).doesNotExist();
        assertThat(command.isAlive()).isFalse();
    }

    /** A handle whose task process is this test's own JVM: found running, in the agent's own namespaces. */
    private TaskHandle aTaskThatIsThisProcess() throws IOException {
        long self = ProcessHandle.current().pid();
        Path status = Files.createDirectories(root.resolve("task/.drover-raw-exec"));
        Files.writeString(status.resolve("env"), "");
        return new TaskHandle(
                HostDrivers.NAME,
                "t1",
                Instant.now(),
                Map.of(
                        "pid", Long.toString(self),
                        "pidStart", Long.toString(Procs.startTime(self).orElseThrow()),
                        "statusDir", status.toString()));
    }

    /** The one command cgroup made in the task's. */
    private Path commandCgroup() throws IOException {
        try (Stream<Path> children = Files.list(task.directories().getFirst())) {
            return children.filter(Files::isDirectory).findFirst().orElseThrow();
        }
    }

    /** The kernel's part when {@code pid} dies: it leaves every cgroup.procs, and an empty cgroup can go. */
    private void dies(long pid) {
        try (Stream<Path> files = Files.walk(task.directories().getFirst())) {
            for (Path procs : files.filter(f -> f.endsWith("cgroup.procs")).toList()) {
                List<String> left = new ArrayList<>(Files.readAllLines(procs));
                left.remove(Long.toString(pid));
                if (left.isEmpty()) {
                    Files.delete(procs); // a fake cgroup is a directory: rmdir wants it empty
                } else {
                    Files.write(procs, left);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void write(String path, String text) throws IOException {
        write(root.resolve(path), text);
    }

    private static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
    }
}
