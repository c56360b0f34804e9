package dev.drover.driver.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drover.cgroups.Cgroup;
import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskAttachments;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskMount;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.driver.host.TaskMonitor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * exec tasks on the real kernel, as root: cgroups are made below this test process's own cgroup and removed after,
 * and only processes these tests started are ended. The data dir is never below /tmp, which each task gets a
 * private one of ({@link #dataBase}). Skipped where this process cannot confine tasks.
 */
class ExecDriverKernelTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final LogRotator rotator = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
    private final List<TaskHandle> started = new ArrayList<>();
    private Path data;
    private Path alloc;
    private Cgroups cgroups;
    private CgroupParent parent;
    private TaskCgroups taskCgroups;
    private ExecDriver driver;

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
        data = Files.createTempDirectory(dataBase(), "exec-data");
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwx------")); // as the agent makes it
        Files.writeString(data.resolve("state.db"), "the agent's store");
        Files.createDirectories(data.resolve("allocs/default/neighbour/alloc"));
        alloc = Files.createDirectories(data.resolve("allocs/default/web"));
        Files.createDirectories(alloc.resolve("alloc/logs"));
        driver = new ExecDriver(
                Clock.systemUTC(),
                rotator,
                List.of(),
                taskCgroups,
                new Namespaces(data, Path.of("/etc/passwd"), new GpuNodes(Path.of("/dev"), data, false)),
                Optional.empty(),
                TaskMonitor.install(data));
    }

    @AfterEach
    void endWhatWeStartedAndRemoveWhatWeMade() throws Exception {
        for (TaskHandle h : started) {
            Optional<Cgroup> c = cgroups.find(parent, h.state().getOrDefault("cgroup", "none"));
            if (c.isPresent()) {
                c.get().killAll(TIMEOUT); // only processes these tests started entered it
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
    }

    private TaskConfig task(String name, String user, String script) throws IOException {
        Path taskDir = alloc.resolve(name);
        for (String sub : List.of("local", "tmp", "secrets")) {
            Files.createDirectories(taskDir.resolve(sub));
        }
        Files.setPosixFilePermissions(taskDir.resolve("secrets"), PosixFilePermissions.fromString("rwx------"));
        return new TaskConfig(
                "default",
                "web",
                name,
                Map.of("command", "/bin/sh", "args", List.of("-c", script)),
                Map.of(
                        "DROVER_ALLOC_DIR", alloc.resolve("alloc").toString(),
                        "DROVER_TASK_DIR", taskDir.toString(),
                        "DROVER_SECRETS_DIR", taskDir.resolve("secrets").toString(),
                        "LD_PRELOAD", taskDir.resolve("local/evil.so").toString()),
                alloc.resolve("alloc"),
                taskDir,
                alloc.resolve("alloc/logs"),
                taskDir.resolve("secrets"),
                null,
                user);
    }

    /** Runs the task to its end; its exit and what it wrote to stdout and stderr. */
    private Run run(TaskConfig task) throws Exception {
        TaskHandle h = driver.start(task);
        started.add(h);
        ExitResult exit = driver.exit(h).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        return new Run(exit, Files.readString(task.stdout()), Files.readString(task.stderr()));
    }

    private record Run(ExitResult exit, String stdout, String stderr) {}

    @Test
    void aTaskIsPidOnesChildInItsOwnNamespaceAsNobodySeeingOnlyItsOwnAllocation() throws Exception {
        Run r = run(task("api", null, """
                echo "ppid=$PPID uid=$(id -u) gid=$(id -g) groups=$(id -G)"
                echo "init=$(cat /proc/1/comm) processes=$(ls /proc | grep -c '^[0-9]')"
                echo "store=$(cat %s/state.db 2>/dev/null || echo unseen)"
                echo "allocs=$(ls -A %s | tr '\\n' ' ')"
                echo "preload=$LD_PRELOAD"
                """.formatted(data, data.resolve("allocs/default"))));

        assertThat(r.exit().exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout())
                .contains("ppid=1 uid=65534 gid=65534 groups=65534\n")
                .as("PID 1 is the namespace's setup shell; the task, its id and ls are all it sees")
                .containsPattern("init=sh processes=[2-5]\n")
                .as("the agent's store and other allocations are covered")
                .contains("store=unseen\n")
                .contains("allocs=web \n")
                .as("the task's own variables apply once it is the task's user")
                .contains("preload=" + alloc.resolve("api/local/evil.so"));
    }

    /**
     * A signal for the task (a template's SIGHUP) reaches the task inside its namespaces, not {@code unshare}: that one
     * would die of SIGHUP and take the whole namespace with it.
     */
    @Test
    void aSignalReachesTheTaskInItsNamespaceWhichLivesOn() throws Exception {
        TaskConfig task = task(
                "reloader",
                null,
                "trap 'echo \"hup from $$ child of $PPID\" >> local/reloads' HUP; echo ready > local/ready;"
                        + " while :; do sleep 0.05; done");
        TaskHandle h = driver.start(task);
        started.add(h);
        Path ready = task.taskDir().resolve("local/ready");
        Path reloads = task.taskDir().resolve("local/reloads");
        await().atMost(TIMEOUT).until(() -> Files.exists(ready) && Files.size(ready) > 0);

        driver.signal(h, "SIGHUP");
        await().atMost(TIMEOUT)
                .until(() ->
                        Files.exists(reloads) && Files.readAllLines(reloads).size() == 1);
        driver.signal(h, "SIGHUP");
        await().atMost(TIMEOUT).until(() -> Files.readAllLines(reloads).size() == 2);

        assertThat(Files.readAllLines(reloads)).allMatch(line -> line.matches("hup from \\d+ child of 1"));
        assertThat(driver.exit(h)).isNotDone();
        driver.stop(h, Duration.ofSeconds(5), "SIGTERM");
        assertThatThrownBy(() -> driver.signal(h, "SIGHUP")).isInstanceOf(TaskNotRunningException.class);
    }

    /**
     * The task starts in its own directory as its namespace shows it: climbing {@code ..} from there (or through
     * /proc/self/cwd) reaches only the covered data dir, never the host's directories of other allocations.
     */
    @Test
    void climbingFromItsWorkingDirectoryFindsNoOtherAllocation() throws Exception {
        Run r = run(task("climber", null, "pwd; ls -A ../..; ls -A ../../..; ls -A /proc/self/cwd/../.."));

        assertThat(r.exit().exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).doesNotContain("neighbour").contains("web");
    }

    @Test
    void aTasksSecretsAreItsUsersAloneAndAnotherUsersTaskCannotReadThem() throws Exception {
        TaskConfig owner = task("owner", null, "cat \"$DROVER_SECRETS_DIR/token\"");
        Path token = Files.writeString(owner.secretsDir().resolve("token"), "s3cret");
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        assertThat(run(owner).stdout()).as("the task reads its own secrets").isEqualTo("s3cret");
        assertThat(Files.getAttribute(owner.secretsDir(), "unix:uid", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(65534);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(owner.secretsDir())))
                .isEqualTo("rwx------");

        Run thief = run(task("thief", "daemon", "id -un; cat " + token + " || ls " + owner.secretsDir()));

        assertThat(thief.stdout()).isEqualTo("daemon\n");
        assertThat(thief.stderr()).contains("Permission denied").doesNotContain("s3cret");
        assertThat(thief.exit().exitCode()).isNotZero();
    }

    @Test
    void aHardLinkAnEarlierRunLeftInItsDirectoryIsNotGivenToTheTask() throws Exception {
        Path agentsFile = Files.writeString(data.resolve("agent-secret"), "root only");
        Files.setPosixFilePermissions(agentsFile, PosixFilePermissions.fromString("rw-------"));
        TaskConfig t = task("linker", null, "cat local/loot || echo refused");
        Files.createLink(t.taskDir().resolve("local/loot"), agentsFile);

        Run r = run(t);

        assertThat(r.stdout()).isEqualTo("refused\n");
        assertThat(Files.getAttribute(agentsFile, "unix:uid", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(0);
        assertThat(Files.getAttribute(t.taskDir().resolve("local"), "unix:uid", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(65534);
    }

    @Test
    void aVolumeIsBoundInsideTheTasksDirectoriesWritableOrReadOnly() throws Exception {
        Path shared = Files.createTempDirectory(data.getParent(), "exec-shared");
        Path reference = Files.createTempDirectory(data.getParent(), "exec-reference");
        try {
            Files.writeString(reference.resolve("data.txt"), "kept");
            for (Path p : List.of(shared, reference)) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxrwxrwx"));
            }
            Map<String, Object> config = Map.of(
                    "command",
                    "/bin/sh",
                    "args",
                    List.of(
                            "-c",
                            "echo written > local/shared/out; cat $DROVER_ALLOC_DIR/ref/data.txt; echo;"
                                    + " (echo no > $DROVER_ALLOC_DIR/ref/data.txt) 2>&1; true"),
                    "volumeMounts",
                    List.of(
                            Map.of("volume", "shared", "destination", "/local/shared"),
                            Map.of("volume", "reference", "destination", "/alloc/ref", "readOnly", true)));
            assertThat(driver.validate(config)).isEmpty();
            TaskConfig t = task("volumes", null, "")
                    .withConfig(config)
                    .withAttachments(new TaskAttachments.Builder()
                            .mount(new TaskMount(shared, "/local/shared", false))
                            .mount(new TaskMount(reference, "/alloc/ref", true))
                            .build());

            Run r = run(t);

            assertThat(r.exit().exitCode()).as(r.stderr()).isZero();
            assertThat(shared.resolve("out")).hasContent("written");
            assertThat(reference.resolve("data.txt")).hasContent("kept");
            assertThat(r.stdout()).startsWith("kept\n").contains("Read-only file system");
            assertThat(Files.readString(Path.of("/proc/self/mountinfo")))
                    .as("the binds were in the task's namespace only")
                    .doesNotContain(t.taskDir().resolve("local/shared").toString());
        } finally {
            for (Path p : List.of(shared.resolve("out"), reference.resolve("data.txt"), shared, reference)) {
                Files.deleteIfExists(p);
            }
        }
    }

    @Test
    void aLinkATaskLeftWhereAVolumeGoesIsNotFollowedAndAnExecVolumeOverEtcIsRefused() throws Exception {
        Path shared = Files.createTempDirectory(data.getParent(), "exec-shared");
        try {
            Map<String, Object> config = Map.of(
                    "command",
                    "/bin/true",
                    "volumeMounts",
                    List.of(Map.of("volume", "shared", "destination", "/local/etc")));
            TaskConfig t = task("linked", null, "")
                    .withConfig(config)
                    .withAttachments(new TaskAttachments.Builder()
                            .mount(new TaskMount(shared, "/local/etc", false))
                            .build());
            Files.createSymbolicLink(t.taskDir().resolve("local/etc"), Path.of("/etc"));

            assertThatThrownBy(() -> driver.start(t))
                    .hasMessageContaining("local/etc is a symbolic link, which a volume is never mounted through");
            assertThat(driver.validate(Map.of(
                            "command",
                            "/bin/true",
                            "volumeMounts",
                            List.of(Map.of("volume", "shared", "destination", "/etc")))))
                    .singleElement()
                    .asString()
                    .startsWith("config.volumeMounts[0].destination: \"/etc\" is outside the task's directories: an"
                            + " exec task shares the host's root file system");
        } finally {
            Files.deleteIfExists(shared);
        }
    }

    /** The setup shell's own guard, for a link put in place after the agent made the mount point. */
    @Test
    void theSetupShellMountsNoVolumeThroughALinkEvenWhenTheAgentsCheckWasRaced() throws Exception {
        Path shared = Files.createTempDirectory(data.getParent(), "exec-shared");
        try {
            TaskConfig t = task("raced", null, "");
            Path env = Files.writeString(t.taskDir().resolve("env"), "");
            Path link = Files.createSymbolicLink(t.taskDir().resolve("local/etc"), Path.of("/etc"));
            List<String> argv = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private", "--"));
            argv.addAll(List.of("/bin/sh", "-c", Namespaces.SETUP, "drover-exec", data.toString(), alloc.toString()));
            argv.addAll(List.of(t.taskDir().toString(), env.toString(), "1", shared.toString(), link.toString()));
            argv.addAll(List.of("rw", "0", "/bin/echo", "ran"));
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();

            assertThat(p.exitValue()).as(out).isEqualTo(126);
            assertThat(out)
                    .contains(link + " is reached through a link: no volume goes there")
                    .doesNotContain("ran");
        } finally {
            Files.deleteIfExists(shared);
        }
    }

    @Test
    void aGpuNodeTheTaskWasNotGivenReadsAsDevNullInItsNamespace() throws Exception {
        Path dev = Files.createTempDirectory(data.getParent(), "exec-dev");
        Files.setPosixFilePermissions(dev, PosixFilePermissions.fromString("rwxr-xr-x")); // as /dev is
        Path gpus = Files.createDirectories(dev.resolve("gpus/0000:01:00.0"));
        try {
            Files.writeString(dev.resolve("nvidia0"), "gpu 0");
            Files.writeString(dev.resolve("nvidia1"), "gpu 1");
            for (String node : List.of("nvidia0", "nvidia1")) {
                Files.setPosixFilePermissions(dev.resolve(node), PosixFilePermissions.fromString("rw-rw-rw-"));
            }
            Files.writeString(gpus.resolve("information"), "GPU UUID: GPU-given\nDevice Minor: 1\n");
            driver.close(); // replaced by one that sees these nodes
            driver = new ExecDriver(
                    Clock.systemUTC(),
                    rotator,
                    List.of(),
                    taskCgroups,
                    new Namespaces(data, Path.of("/etc/passwd"), new GpuNodes(dev, dev.resolve("gpus"), true)),
                    Optional.empty(),
                    TaskMonitor.install(data));
            TaskConfig t = task("gpu", null, "echo \"[$(cat %s/nvidia0)] [$(cat %s/nvidia1)]\"".formatted(dev, dev));
            t = new TaskConfig(
                    t.namespace(),
                    t.allocName(),
                    t.taskName(),
                    t.config(),
                    Map.of("NVIDIA_VISIBLE_DEVICES", "GPU-given"),
                    t.allocDir(),
                    t.taskDir(),
                    t.logsDir(),
                    t.secretsDir(),
                    null,
                    null);

            Run r = run(t);

            assertThat(r.stdout()).as(r.stderr()).isEqualTo("[] [gpu 1]\n");
            assertThat(Files.readString(dev.resolve("nvidia0")))
                    .as("covered in the task's view only")
                    .isEqualTo("gpu 0");
        } finally {
            try (Stream<Path> tree = Files.walk(dev)) {
                for (Path p : tree.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    @Test
    void stopSignalsTheTaskItselfNotTheNamespacesInitSoItCanEndGracefully() throws Exception {
        TaskConfig t = task("graceful", null, "trap 'echo graceful; exit 7' TERM; echo ready; sleep 30 & wait");
        TaskHandle h = driver.start(t);
        started.add(h);
        await().atMost(TIMEOUT).until(() -> Files.readString(t.stdout()).contains("ready"));

        driver.stop(h, Duration.ofSeconds(10), "SIGTERM");

        ExitResult exit = driver.exit(h).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(exit.exitCode()).isEqualTo(7);
        assertThat(Files.readString(t.stdout())).isEqualTo("ready\ngraceful\n");
    }

    /**
     * A kill signal that {@code unshare} does not block (SIGHUP, SIGUSR1) reaches the task's process group inside the
     * namespace and not {@code unshare}, which would die of it and SIGKILL the whole namespace before the task's
     * handler ran.
     */
    @ParameterizedTest
    @ValueSource(strings = {"SIGHUP", "SIGUSR1", "SIGTERM"})
    void stopWithAnyKillSignalLetsTheTasksHandlerCleanUpAndExit(String signal) throws Exception {
        String trap = signal.substring(3);
        TaskConfig t = task(
                "graceful-" + trap.toLowerCase(Locale.ROOT),
                null,
                "trap 'echo graceful > \"$DROVER_TASK_DIR/local/out\"; exit 0' " + trap
                        + "; echo ready; sleep 30 & wait");
        TaskHandle h = driver.start(t);
        started.add(h);
        await().atMost(TIMEOUT).until(() -> Files.readString(t.stdout()).contains("ready"));

        long before = System.nanoTime();
        driver.stop(h, Duration.ofSeconds(8), signal);

        ExitResult exit = driver.exit(h).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(exit.signal()).as("not SIGKILLed with its namespace").isNull();
        assertThat(exit.exitCode()).isZero();
        assertThat(t.taskDir().resolve("local/out")).hasContent("graceful");
        assertThat(Duration.ofNanos(System.nanoTime() - before))
                .as("it ended at once, not at the kill timeout")
                .isLessThan(Duration.ofSeconds(6));
    }

    @Test
    void theStopSignalReachesWhatTheTaskStartedInItsGroupToo() throws Exception {
        TaskConfig t = task(
                "family",
                null,
                "sh -c 'trap \"echo child >> local/out; exit 0\" USR1; while :; do sleep 0.05; done' &"
                        + " trap 'wait; echo parent >> local/out; exit 0' USR1; echo ready; while :; do sleep 0.05; done");
        TaskHandle h = driver.start(t);
        started.add(h);
        await().atMost(TIMEOUT).until(() -> Files.readString(t.stdout()).contains("ready"));

        driver.stop(h, Duration.ofSeconds(8), "SIGUSR1");

        ExitResult exit = driver.exit(h).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(exit.signal()).isNull();
        assertThat(Files.readAllLines(t.taskDir().resolve("local/out"))).containsExactly("child", "parent");
    }

    @Test
    void aTaskIgnoringTheKillSignalIsSigkilledAfterTheKillTimeout() throws Exception {
        TaskConfig t = task("stubborn", null, "trap '' HUP TERM; echo ready; while :; do sleep 0.05; done");
        TaskHandle h = driver.start(t);
        started.add(h);
        await().atMost(TIMEOUT).until(() -> Files.readString(t.stdout()).contains("ready"));

        long before = System.nanoTime();
        driver.stop(h, Duration.ofSeconds(2), "SIGHUP");

        ExitResult exit = driver.exit(h).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - before)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
        assertThat(exit.signal()).isEqualTo("SIGKILL");
        assertThat(ProcessHandle.of(h.longState("pid", -1))).isEmpty();
    }

    @Test
    void tmpIsTheTasksOwnAndDevicesAreSeenThroughItsOwnMountNamespace() throws Exception {
        String marker = "drover-exec-" + UUID.randomUUID();
        TaskConfig t = task("scratch", "65534", "echo x > /tmp/" + marker + " && ls -A /tmp && hostname -s >/dev/null");

        Run r = run(t);

        assertThat(r.exit().exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(marker + "\n");
        assertThat(Path.of("/tmp", marker)).as("the host's /tmp is untouched").doesNotExist();
        assertThat(t.taskDir().resolve("tmp").resolve(marker)).exists();
    }

    /**
     * Where the test's data dir goes: the module's target/, unless the checkout itself is below /tmp (a clean
     * clone often is), which each exec task gets a private one of; /var/tmp then.
     */
    private static Path dataBase() throws java.io.IOException {
        Path target = Files.createDirectories(Path.of("target")).toAbsolutePath();
        return target.startsWith("/tmp") ? Path.of("/var/tmp") : target;
    }
}
