package dev.drover.driver.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drover.cgroups.Cgroup;
import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.driver.host.TaskMonitor;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Commands run inside exec tasks on the real kernel, as root, set up as {@link ExecDriverKernelTest} does: cgroups
 * below this test process's own, removed after; only processes these tests started are ended, and each test checks
 * that its commands left nothing in the task's cgroup. Skipped where this process cannot confine tasks.
 */
class ExecDriverExecTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final LogRotator rotator = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
    private final List<TaskHandle> started = new ArrayList<>();
    private final List<ExecProcess> commands = new ArrayList<>();
    private Path data;
    private Path alloc;
    private Cgroups cgroups;
    private CgroupParent parent;
    private TaskCgroups taskCgroups;
    private ExecDriver driver;
    private Optional<Path> monitor = Optional.empty();

    @BeforeEach
    void aDataDirAndCgroupsOfOurOwn() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/mountinfo")), "no /proc");
        try {
            cgroups = Cgroups.detect();
            parent = CgroupParent.own()
                    .child("drover-test-" + UUID.randomUUID().toString().substring(0, 8));
            taskCgroups = TaskCgroups.open(cgroups, parent, 64);
        } catch (IOException e) {
            abort("cannot make cgroups below this process's own: " + e.getMessage());
        }
        Optional<String> missing = ExecSupport.missing(true);
        assumeTrue(missing.isEmpty(), () -> "this process cannot confine tasks: " + missing.orElse(""));
        Path target = Files.createDirectories(Path.of("target")).toAbsolutePath();
        data = Files.createTempDirectory(target.startsWith("/tmp") ? Path.of("/var/tmp") : target, "exec-data");
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwx------"));
        Files.writeString(data.resolve("state.db"), "the agent's store");
        alloc = Files.createDirectories(data.resolve("allocs/default/web"));
        Files.createDirectories(alloc.resolve("alloc/logs"));
        monitor = TaskMonitor.install(data); // as the agent runs tasks: under drover-monitor
        driver = driver();
    }

    private ExecDriver driver() {
        return new ExecDriver(
                Clock.systemUTC(),
                rotator,
                List.of(),
                taskCgroups,
                new Namespaces(data, Path.of("/etc/passwd"), new GpuNodes(Path.of("/dev"), data, false)),
                Optional.empty(),
                monitor);
    }

    @AfterEach
    void endWhatWeStartedAndRemoveWhatWeMade() throws Exception {
        commands.forEach(ExecProcess::close);
        List<String> left = new ArrayList<>(); // checked once all is cleaned up, so a failure leaves nothing behind
        for (TaskHandle h : started) {
            Optional<Cgroup> c = cgroups.find(parent, h.state().getOrDefault("cgroup", "none"));
            if (c.isPresent()) {
                if (!driver.exit(h).isDone()) {
                    List<Long> pids = c.get().pids(); // unshare, the namespace's init and the task: nothing more
                    if (pids.size() > 3) {
                        left.add("processes " + pids + " in " + h.taskId() + "'s cgroup");
                    }
                }
                c.get().killAll(TIMEOUT);
                c.get().remove(TIMEOUT);
            }
            long supervisor = h.longState("supervisorPid", -1);
            await().atMost(TIMEOUT)
                    .until(() ->
                            ProcessHandle.of(supervisor).map(p -> !p.isAlive()).orElse(true));
        }
        if (driver != null) {
            driver.close();
        }
        rotator.close();
        if (parent != null) {
            List<String> up = parent.segments().subList(0, parent.segments().size() - 1);
            Optional<Cgroup> made =
                    cgroups.find(new CgroupParent(true, up), parent.segments().getLast());
            if (made.isPresent()) {
                made.get().remove(TIMEOUT);
            }
        }
        if (data != null) {
            try (Stream<Path> tree = Files.walk(data)) {
                for (Path p : tree.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        assertThat(left).as("what the commands left running").isEmpty();
    }

    private TaskHandle start(String name) throws IOException, dev.drover.driver.DriverStartException {
        return start(name, "echo ready; exec sleep 1000");
    }

    private TaskHandle start(String name, String script) throws IOException, dev.drover.driver.DriverStartException {
        Path taskDir = alloc.resolve(name);
        for (String sub : List.of("local", "tmp", "secrets")) {
            Files.createDirectories(taskDir.resolve(sub));
        }
        TaskHandle h = driver.start(new TaskConfig(
                "default",
                "web",
                name,
                Map.of("command", "/bin/sh", "args", List.of("-c", script)),
                Map.of("GREETING", "it's me", "DROVER_TASK_DIR", taskDir.toString()),
                alloc.resolve("alloc"),
                taskDir,
                alloc.resolve("alloc/logs"),
                taskDir.resolve("secrets"),
                null,
                null));
        started.add(h);
        Path stdout = alloc.resolve("alloc/logs/" + name + ".stdout.0");
        await().atMost(TIMEOUT)
                .until(() -> Files.exists(stdout) && Files.readString(stdout).contains("ready"));
        return h;
    }

    private ExecProcess exec(TaskHandle h, boolean stdin, boolean tty, String... command) throws Exception {
        ExecProcess p = driver.exec(h, new ExecRequest(List.of(command), stdin, tty));
        commands.add(p);
        return p;
    }

    private static String read(InputStream in) throws IOException {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }

    private static int exitOf(ExecProcess p) throws Exception {
        return p.exit().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void aCommandSeesWhatTheTaskSeesAsItsUserInItsDirectoryWithItsEnvironment() throws Exception {
        TaskHandle h = start("api");

        ExecProcess p = exec(h, false, false, "sh", "-c", """
                echo "$(id -u) $(pwd) $GREETING"
                echo "init=$(cat /proc/1/comm) sleeping=$(cat /proc/[0-9]*/comm | grep -c '^sleep$')"
                echo "processes=$(ls /proc | grep -c '^[0-9]')"
                cat %s/state.db 2>/dev/null || echo "store unseen"
                """.formatted(data));

        assertThat(read(p.stdout()))
                .startsWith("65534 " + alloc.resolve("api") + " it's me\n")
                .as("inside the task's PID namespace: its init, the task, and this command's few processes")
                .contains("init=sh sleeping=1\n")
                .containsPattern("processes=[3-7]\n")
                .as("through the task's mount namespace")
                .endsWith("store unseen\n");
        assertThat(exitOf(p)).isZero();
    }

    @Test
    void aTaskInAUserNamespaceOfItsOwnRunsNoCommandSoItsMountsNeverRunAsRoot() throws Exception {
        Process probe = new ProcessBuilder(
                        "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "unshare", "-Ur", "true")
                .redirectErrorStream(true)
                .start();
        assumeTrue(
                probe.waitFor(10, TimeUnit.SECONDS) && probe.exitValue() == 0,
                "unprivileged user namespaces are disabled here: a task cannot make one");
        Path local = Files.createDirectories(alloc.resolve("escape/local"));
        Path evil = local.resolve("evil");
        Path marker = local.resolve("ran-as");
        Files.writeString(evil, "#!/bin/bash\nid -u > " + marker + "\n");
        Files.setPosixFilePermissions(evil, PosixFilePermissions.fromString("rwxr-xr-x"));
        // exec in place: the task's process keeps its PID and start time in a user and mount namespace of its own
        TaskHandle h = start(
                "escape",
                "exec unshare -Urm sh -c 'mount --bind " + evil + " /bin/sh && echo ready && exec sleep 1000'");

        ExecProcess p = exec(h, false, false, "true");
        String said = read(p.stderr());
        int exit = exitOf(p);

        assertThat(marker).as("the task's program never ran as root").doesNotExist();
        assertThat(said)
                .contains("drover: exec: the task made a user namespace of its own: commands cannot be run inside it");
        assertThat(exit).isEqualTo(126);
    }

    @Test
    void catExitCodesAndSignalsAreTheCommands() throws Exception {
        TaskHandle h = start("codes");

        ExecProcess cat = exec(h, true, false, "cat");
        cat.stdin().write("round trip\n".getBytes(StandardCharsets.UTF_8));
        cat.stdin().close();
        assertThat(read(cat.stdout())).isEqualTo("round trip\n");
        assertThat(exitOf(cat)).isZero();
        assertThat(exitOf(exec(h, false, false, "sh", "-c", "exit 3"))).isEqualTo(3);
        assertThat(exitOf(exec(h, false, false, "sh", "-c", "kill -TERM $$"))).isEqualTo(128 + 15);
    }

    @Test
    void theCommandIsChargedToTheTasksCgroupAndCloseEndsItAloneInTheNamespace() throws Exception {
        TaskHandle h = start("counted");
        Cgroup cgroup = cgroups.find(parent, h.state().get("cgroup")).orElseThrow();
        List<Long> before = cgroup.pids();

        ExecProcess p = exec(h, false, false, "sh", "-c", "sleep 1000 & echo started; wait");
        assertThat(new String(p.stdout().readNBytes(8), StandardCharsets.UTF_8)).isEqualTo("started\n");
        List<Long> added = new ArrayList<>(cgroup.pids());
        added.removeAll(before);
        assertThat(added).as("nsenter, the command's shell and its sleep").hasSize(3);

        p.close();

        assertThat(exitOf(p)).isEqualTo(137);
        await().atMost(TIMEOUT)
                .until(() -> added.stream()
                        .noneMatch(pid -> ProcessHandle.of(pid)
                                .map(ProcessHandle::isAlive)
                                .orElse(false)));
        assertThat(driver.exit(h)).as("the task lives on").isNotDone();
        ExecProcess ps = exec(h, false, false, "sh", "-c", "cat /proc/[0-9]*/comm | grep -c '^sleep$'");
        assertThat(read(ps.stdout())).as("the task's sleep alone").isEqualTo("1\n");
    }

    @Test
    void onATerminalTheCommandHasItsOwnTerminalInTheTasksNamespace() throws Exception {
        TaskHandle h = start("shell");

        ExecProcess size = exec(h, true, true, "sh", "-c", "tty; stty -echo; echo ready; read line; stty size");
        size.resize(90, 20);
        String shown = "";
        while (!shown.contains("ready\r\n")) {
            int b = size.stdout().read();
            assertThat(b).isNotNegative();
            shown += (char) b;
        }
        assertThat(shown).matches("(?s)/dev/pts/[0-9]+\r\nready\r\n");
        size.resize(101, 33);
        size.stdin().write("go\n".getBytes(StandardCharsets.UTF_8));
        assertThat(read(size.stdout())).isEqualTo("33 101\r\n");
        assertThat(exitOf(size)).isZero();
    }

    @Test
    void aTaskReattachedByALaterAgentRunsCommandsButNotOnceItEnded() throws Exception {
        TaskHandle h = start("kept");
        driver.close();
        driver = driver();
        driver.recover(h);

        ExecProcess p = exec(h, false, false, "sh", "-c", "id -un; cat /proc/[0-9]*/comm | grep -c '^sleep$'");
        assertThat(read(p.stdout())).isEqualTo("nobody\n1\n");

        driver.stop(h, Duration.ofSeconds(5), "SIGTERM");
        assertThatThrownBy(() -> exec(h, false, false, "true")).isInstanceOf(TaskNotRunningException.class);
    }
}
