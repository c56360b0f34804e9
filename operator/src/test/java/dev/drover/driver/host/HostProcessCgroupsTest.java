package dev.drover.driver.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drover.cgroups.Cgroup;
import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskResources;
import dev.drover.driver.TaskStats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Host-process tasks in cgroups on the real kernel: every cgroup is made below this test process's own cgroup and
 * removed after; only processes these tests started are ended. Skipped where cgroups cannot be made.
 */
class HostProcessCgroupsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private final LogRotator rotator = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
    private final List<TaskHandle> started = new ArrayList<>();
    private final List<HostProcessDriver> drivers = new ArrayList<>();
    private Cgroups cgroups;
    private CgroupParent parent;
    private TaskCgroups taskCgroups;
    private HostProcessDriver driver;

    @BeforeEach
    void aParentBelowOurOwnCgroup() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/mountinfo")), "no /proc");
        try {
            cgroups = Cgroups.detect();
            parent = CgroupParent.own()
                    .child("drover-test-" + UUID.randomUUID().toString().substring(0, 8));
            taskCgroups = TaskCgroups.open(cgroups, parent, 64);
        } catch (IOException e) {
            abort("cannot make cgroups below this process's own: " + e.getMessage());
        }
        driver = driver();
    }

    private HostProcessDriver driver() {
        HostProcessDriver d = HostDrivers.inCgroups(rotator, taskCgroups);
        drivers.add(d);
        return d;
    }

    @AfterEach
    void endWhatWeStartedAndRemoveWhatWeMade() throws Exception {
        for (TaskHandle h : started) {
            Optional<Cgroup> c = taskCgroups.find(h);
            if (c.isPresent()) {
                c.get().killAll(TIMEOUT); // only processes these tests started entered it
                c.get().remove(TIMEOUT);
            }
            long supervisor = h.longState("supervisorPid", -1);
            await().atMost(TIMEOUT)
                    .until(() ->
                            ProcessHandle.of(supervisor).map(p -> !p.isAlive()).orElse(true));
        }
        drivers.forEach(HostProcessDriver::close);
        rotator.close();
        if (parent != null) {
            List<String> up = parent.segments().subList(0, parent.segments().size() - 1);
            Optional<Cgroup> made =
                    cgroups.find(new CgroupParent(true, up), parent.segments().getLast());
            if (made.isPresent()) {
                made.get().remove(TIMEOUT);
            }
        }
    }

    private boolean parentExists() throws IOException {
        List<String> up = parent.segments().subList(0, parent.segments().size() - 1);
        return cgroups.find(new CgroupParent(true, up), parent.segments().getLast())
                .isPresent();
    }

    @Test
    void anAgentThatStopsWithNothingRunningLeavesNoCgroupButOneWithATaskKeepsItsParent() throws Exception {
        TaskHandle running = start("keeps", "sleep 30", TaskResources.NONE);
        driver.close();
        assertThat(parentExists()).as("a task still runs in it").isTrue();

        HostProcessDriver next = driver();
        next.destroy(running); // ends the task and removes its cgroup
        next.close();
        assertThat(parentExists()).as("nothing left in it at the agent's stop").isFalse();
    }

    private TaskHandle start(String name, String script, TaskResources resources) throws Exception {
        Files.createDirectories(dir.resolve(name));
        TaskHandle h = driver.start(task(name, script, resources));
        started.add(h);
        return h;
    }

    private TaskConfig task(String name, String script, TaskResources resources) {
        return new TaskConfig(
                "default",
                "alloc",
                name,
                Map.of("command", "/bin/sh", "args", List.of("-c", script)),
                Map.of(),
                dir.resolve("alloc"),
                dir.resolve(name),
                dir.resolve("alloc/logs"),
                dir.resolve(name + "/secrets"),
                resources);
    }

    private Cgroup cgroupOf(String name) throws IOException {
        return cgroups.find(parent, TaskCgroups.nameOf(task(name, "", TaskResources.NONE)))
                .orElseThrow();
    }

    @Test
    void theTaskRunsInItsOwnCgroupHeldToItsLimitsAndItsSupervisorDoesNot() throws Exception {
        TaskHandle h = start("limited", "exec sleep 60", new TaskResources(250, 64, true));
        Cgroup cgroup = cgroupOf("limited");

        assertThat(cgroup.name()).isEqualTo("default_alloc_limited");
        // the task's shell joins first and runs mv to publish its pid file, which may not have exited yet
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(cgroup.pids()).containsExactly(h.longState("pid", -1)));
        assertThat(cgroup.pids()).doesNotContain(h.longState("supervisorPid", -1));
        if (cgroups.layout().version() == dev.drover.cgroups.CgroupVersion.V1) {
            assertThat(read(cgroup, "memory.limit_in_bytes")).isEqualTo(Long.toString(64L << 20));
            assertThat(read(cgroup, "cpu.shares")).isEqualTo("256");
            assertThat(read(cgroup, "cpu.cfs_quota_us")).isEqualTo("25000");
            assertThat(read(cgroup, "pids.max")).isEqualTo("64");
        } else {
            assertThat(read(cgroup, "memory.max")).isEqualTo(Long.toString(64L << 20));
            assertThat(read(cgroup, "cpu.max")).isEqualTo("25000 100000");
            assertThat(read(cgroup, "pids.max")).isEqualTo("64");
        }
        TaskStats stats = driver.stats(h);
        assertThat(stats.memoryBytes()).isPositive();
        assertThat(stats.workingSetBytes()).isPositive().isLessThanOrEqualTo(stats.memoryBytes());
        assertThat(stats.memoryLimitBytes()).as("the limit the kernel holds").isEqualTo(64L << 20);
    }

    @Test
    void aTaskWithoutAMemoryLimitHasNoneInItsStats() throws Exception {
        TaskHandle h = start("unlimited", "exec sleep 60", TaskResources.NONE);

        assertThat(driver.stats(h).memoryLimitBytes()).isZero();
    }

    @Test
    void aTaskPastItsMemoryLimitIsToldAsOomKilled() throws Exception {
        // tail keeps a line without end in memory: 200 MB of it
        TaskHandle h = start("oom", "head -c 200M /dev/zero | tail", new TaskResources(0, 64, false));

        ExitResult exit = driver.exit(h).get(60, TimeUnit.SECONDS);

        assertThat(exit.oomKilled()).isTrue();
        assertThat(exit.successful()).isFalse();
        driver.destroy(h);
        assertThat(cgroups.find(parent, "default_alloc_oom")).isEmpty();
    }

    @Test
    void aTaskThatEndsNormallyIsNotToldAsOomKilled() throws Exception {
        TaskHandle h = start("fine", "head -c 10M /dev/zero | tail -c 1 >/dev/null", new TaskResources(0, 64, false));

        assertThat(driver.exit(h).get(30, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
    }

    /** The attack: a daemon that leaves the task's session and process group, which a group signal misses. */
    @Test
    void stopEndsADaemonThatLeftTheTasksSessionAndDestroyRemovesTheCgroup() throws Exception {
        TaskHandle h =
                start("daemon", "setsid sh -c 'sleep 300 & echo $! > daemon'; exec sleep 300", TaskResources.NONE);
        Path pidFile = dir.resolve("daemon/daemon");
        await().atMost(TIMEOUT)
                .until(() -> Files.exists(pidFile) && !Files.readString(pidFile).isBlank());
        long daemon = Long.parseLong(Files.readString(pidFile).trim());
        assertThat(isGone(daemon)).isFalse();

        driver.stop(h, Duration.ofSeconds(2), "SIGTERM");
        driver.destroy(h);

        await().atMost(TIMEOUT).until(() -> isGone(daemon));
        assertThat(cgroups.find(parent, "default_alloc_daemon")).isEmpty();
    }

    @Test
    void anAgentAfterARestartFindsTheCgroupAgainAndStopEndsEverythingInIt() throws Exception {
        TaskHandle h =
                start("again", "setsid sh -c 'sleep 300 & echo $! > daemon'; exec sleep 300", TaskResources.NONE);
        Path pidFile = dir.resolve("again/daemon");
        await().atMost(TIMEOUT)
                .until(() -> Files.exists(pidFile) && !Files.readString(pidFile).isBlank());
        long daemon = Long.parseLong(Files.readString(pidFile).trim());
        driver.close();

        HostProcessDriver next = driver();
        TaskHandle recovered = next.recover(h);
        assertThat(cgroupOf("again").pids()).contains(h.longState("pid", -1), daemon);
        next.stop(recovered, Duration.ofSeconds(2), "SIGTERM");
        next.destroy(recovered);

        await().atMost(TIMEOUT).until(() -> isGone(daemon));
        assertThat(cgroups.find(parent, "default_alloc_again")).isEmpty();
    }

    @Test
    void longNamesAreCutAndHashedSoTheyStayValidAndDistinct() {
        String alloc = "a".repeat(200);
        String one = TaskCgroups.nameOf(task("one", "", TaskResources.NONE)).replace("default_alloc_", "");
        String longOne = TaskCgroups.nameOf(new TaskConfig("ns", alloc, "one", Map.of(), Map.of(), dir, dir, dir, dir));
        String longTwo = TaskCgroups.nameOf(new TaskConfig("ns", alloc, "two", Map.of(), Map.of(), dir, dir, dir, dir));
        assertThat(one).isEqualTo("one");
        assertThat(longOne).hasSize(CgroupParent.NAME_LIMIT).startsWith("ns_aaa");
        assertThat(longOne).isNotEqualTo(longTwo);
    }

    private static String read(Cgroup cgroup, String file) throws IOException {
        for (Path d : cgroup.directories()) {
            if (Files.exists(d.resolve(file))) {
                return Files.readString(d.resolve(file)).strip();
            }
        }
        throw new IOException("no " + file + " in " + cgroup.directories());
    }

    /** No such process, or only its zombie left for its new parent to reap. */
    private static boolean isGone(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            return true;
        }
    }
}
