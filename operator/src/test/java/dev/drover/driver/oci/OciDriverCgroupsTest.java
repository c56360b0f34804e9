package dev.drover.driver.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.fail;

import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskResources;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.image.ImageStore;
import dev.drover.image.Platform;
import dev.drover.image.RegistryClient;
import dev.drover.image.TestImage;
import dev.drover.image.TestRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Containers under the task's cgroup on the real kernel, as an agent runs them: exit codes, the memory limit, an agent
 * restart. Every cgroup is made below this test process's own and removed after; only containers these tests started
 * are ended.
 */
class OciDriverCgroupsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    static Path shared;

    @TempDir
    Path dir;

    private static TestRegistry registry;
    private static String image;

    private final LogRotator rotator = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
    private final List<OciDriver> drivers = new ArrayList<>();
    private final List<TaskHandle> started = new ArrayList<>();
    private final Map<TaskHandle, TaskConfig> configs = new java.util.HashMap<>();
    private Cgroups cgroups;
    private CgroupParent parent;
    private TaskCgroups taskCgroups;
    private ImageStore store;

    @BeforeAll
    static void registry() throws Exception {
        RuncContainerTest.requireRunc();
        registry = TestRegistry.start(Files.createDirectory(shared.resolve("registry")), TestRegistry.Auth.NONE);
        registry.push(
                "apps/shell",
                "1",
                TestImage.of(
                        Map.of("Entrypoint", List.of("/bin/sh", "-c"), "Env", List.of("PATH=/bin")),
                        false,
                        new TestImage.Layer(TestImage.Compression.GZIP).busybox()));
        image = registry.host() + "/apps/shell:1";
    }

    @AfterAll
    static void stopRegistry() throws Exception {
        if (registry != null) {
            registry.close();
        }
    }

    @BeforeEach
    void aParentBelowOurOwnCgroup() throws IOException {
        try {
            cgroups = Cgroups.detect();
            parent = CgroupParent.own()
                    .child("drover-test-" + UUID.randomUUID().toString().substring(0, 8));
            taskCgroups = TaskCgroups.open(cgroups, parent, 256);
        } catch (IOException e) {
            fail("these tests need cgroups below their own process's cgroup: " + e.getMessage());
        }
        store = new ImageStore(
                dir.resolve("images"),
                new RegistryClient(registry.tls(), Duration.ofSeconds(10), InstantSource.system()),
                Platform.node(),
                256L * 1024 * 1024,
                InstantSource.system());
    }

    /** An agent's oci driver; a second one is the agent after a restart. */
    private OciDriver driver() {
        OciDriver d = new OciDriver(
                Clock.systemUTC(),
                rotator,
                List.of(),
                taskCgroups,
                Optional.empty(),
                store,
                RuncContainerTest.RUNC,
                new OciDriver.OciSettings(
                        false,
                        false,
                        Optional.empty(),
                        new dev.drover.devices.cdi.CdiRegistry(List.of(), java.util.Set.of())));
        drivers.add(d);
        return d;
    }

    @AfterEach
    void endWhatWeStartedAndRemoveWhatWeMade() throws Exception {
        OciDriver last = drivers.isEmpty() ? driver() : drivers.getLast();
        for (TaskHandle h : started) {
            last.destroy(h); // ends the container, its runtime and removes its cgroup
        }
        drivers.forEach(OciDriver::close);
        rotator.close();
        List<String> up = parent.segments().subList(0, parent.segments().size() - 1);
        cgroups.removeWithIdleChildren(
                new CgroupParent(true, up), parent.segments().getLast(), TIMEOUT);
    }

    private TaskConfig task(String name, String script, TaskResources resources) throws IOException {
        Path alloc = Files.createDirectories(dir.resolve("alloc"));
        Path taskDir = dir.resolve(name);
        for (String sub : List.of("local", "secrets", "tmp")) {
            Files.createDirectories(taskDir.resolve(sub));
        }
        Files.createDirectories(alloc.resolve("logs"));
        return new TaskConfig(
                "default",
                "alloc",
                name,
                Map.of("image", image, "args", List.of(script)),
                Map.of(),
                alloc,
                taskDir,
                alloc.resolve("logs"),
                taskDir.resolve("secrets"),
                resources);
    }

    private TaskHandle start(OciDriver driver, TaskConfig task) throws Exception {
        TaskHandle h = driver.start(task);
        started.add(h);
        configs.put(h, task);
        return h;
    }

    @Test
    void theContainersExitCodeIsTheTasksAndAKillBySignalIsToldAs128PlusItsNumber() throws Exception {
        OciDriver driver = driver();
        TaskHandle three = start(driver, task("three", "exit 3", TaskResources.NONE));
        assertThat(driver.exit(three).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                .isEqualTo(ExitResult.code(3));

        TaskHandle killed = start(driver, task("killed", "exec sleep 600", TaskResources.NONE));
        awaitRunning(killed);
        driver.signal(killed, "SIGKILL");
        ExitResult exit = driver.exit(killed).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(exit.exitCode()).as("as Docker and a kubelet report it").isEqualTo(137);
        assertThat(exit.successful()).isFalse();
        assertThat(exit.oomKilled()).as("no memory limit was reached").isFalse();
    }

    @Test
    void aStopOfAContainerThatIgnoresItsSignalEndsItByKillAfterTheTimeout() throws Exception {
        OciDriver driver = driver();
        // sleep as the container's first process has no handler: the kernel drops SIGTERM for it
        TaskConfig t = task("stubborn", "exec sleep 600", TaskResources.NONE);
        TaskHandle h = start(driver, t);
        long pid1 = awaitRunning(h);

        long before = System.nanoTime();
        driver.stop(h, Duration.ofSeconds(1), "SIGTERM");
        ExitResult exit = driver.exit(h).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        assertThat(exit.exitCode()).as(exit.toString()).isEqualTo(137);
        assertThat(Duration.ofNanos(System.nanoTime() - before)).isLessThan(Duration.ofSeconds(15));
        await().atMost(TIMEOUT).until(() -> ProcessHandle.of(pid1).isEmpty());
    }

    /** Waits for the container's first process to run, and gives its host PID. */
    private long awaitRunning(TaskHandle h) {
        TaskConfig t = configs.get(h);
        await().atMost(TIMEOUT).until(() -> Files.exists(stateFile(t)) && containerInit(t) > 0);
        try {
            return containerInit(t);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aContainerPastItsTasksMemoryLimitIsToldAsOomKilled() throws Exception {
        OciDriver driver = driver();
        // tail keeps a line without end in memory: 200 MiB of it, against 64 MiB
        TaskHandle h =
                start(driver, task("oom", "head -c 209715200 /dev/zero | tail", new TaskResources(0, 64, false)));

        ExitResult exit = driver.exit(h).get(60, TimeUnit.SECONDS);

        assertThat(exit.oomKilled()).as(exit.toString()).isTrue();
        assertThat(exit.successful()).isFalse();
    }

    @Test
    void anAgentRestartReattachesToTheRunningContainerWhichStopStillEnds() throws Exception {
        OciDriver before = driver();
        TaskConfig t = task("kept", "echo up; trap 'echo term; exit 0' TERM; while true; do sleep 1; done", null);
        TaskHandle h = start(before, t);
        await().atMost(TIMEOUT).until(() -> Files.readString(t.stdout()).contains("up"));
        long pid1 = containerInit(t);
        before.close(); // the agent goes; the container stays

        OciDriver after = driver();
        TaskHandle recovered = after.recover(h);
        assertThat(recovered.state())
                .containsEntry(OciDriver.CONTAINER_KEY, h.state().get(OciDriver.CONTAINER_KEY));
        assertThat(after.exit(recovered)).isNotDone();
        assertThat(containerInit(t)).as("the same container, not restarted").isEqualTo(pid1);
        assertThat(Files.readString(t.stdout())).isEqualTo("up\n");

        after.stop(recovered, Duration.ofSeconds(10), "SIGTERM");
        assertThat(after.exit(recovered).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                .isEqualTo(ExitResult.code(0));
        await().atMost(TIMEOUT).until(() -> Files.readString(t.stdout()).contains("term"));
        after.destroy(recovered);
        started.remove(h);
        assertThat(ProcessHandle.of(pid1)).isEmpty();
        assertThat(t.taskDir().resolve(OciDriver.BUNDLE)).doesNotExist();
        assertThat(Files.readString(Path.of("/proc/self/mountinfo")))
                .doesNotContain(t.taskDir().toString());
    }

    private static Path stateFile(TaskConfig t) {
        return t.taskDir()
                .resolve(OciDriver.BUNDLE)
                .resolve("runtime")
                .resolve(OciDriver.containerId(t))
                .resolve("state.json");
    }

    /** The host PID of the container's first process, as its runtime's state names it. */
    private static long containerInit(TaskConfig t) throws IOException {
        String json = Files.readString(stateFile(t));
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("\"init_process_pid\":(\\d+)").matcher(json);
        assertThat(m.find()).as(json).isTrue();
        return Long.parseLong(m.group(1));
    }
}
