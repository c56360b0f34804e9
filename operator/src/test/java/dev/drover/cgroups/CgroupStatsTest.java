package dev.drover.cgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Usage, OOM kills and removal, read from fake trees, and what a hostile cgroup file gets. */
class CgroupStatsTest {

    @TempDir
    Path root;

    @Test
    void v2StatsComeFromMemoryCurrentMemoryStatAndCpuStat() throws IOException {
        Cgroup cgroup = v2();
        FakeCgroupTree.layOut(
                cgroup.directories().getFirst(),
                Map.of(
                        "memory.current", "10485760\n",
                        "memory.max", "67108864\n",
                        "memory.stat",
                                "anon 6291456\nfile 3145728\nkernel 1048576\nshmem 0\ninactive_anon 0\n"
                                        + "active_anon 6291456\ninactive_file 2097152\nactive_file 1048576\n",
                        "cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 0\n"));

        CgroupStats stats = cgroup.stats();
        assertThat(stats)
                .isEqualTo(new CgroupStats(
                        10_485_760,
                        6_291_456,
                        3_145_728,
                        2_097_152,
                        67_108_864,
                        Duration.ofMillis(2500),
                        Duration.ofSeconds(2),
                        Duration.ofMillis(500)));
        assertThat(stats.workingSetBytes()).as("usage less inactive_file").isEqualTo(8_388_608);
    }

    @Test
    void v2MemoryMaxOfMaxIsNoLimit() throws IOException {
        Cgroup cgroup = v2();
        FakeCgroupTree.layOut(
                cgroup.directories().getFirst(),
                Map.of(
                        "memory.current", "4096\n",
                        "memory.max", "max\n",
                        "memory.stat", "anon 4096\nfile 0\ninactive_file 0\n",
                        "cpu.stat", "usage_usec 1\nuser_usec 1\nsystem_usec 0\n"));

        assertThat(cgroup.stats().memoryLimitBytes()).isZero();
    }

    @Test
    void theWorkingSetIsNeverNegative() throws IOException {
        Cgroup cgroup = v2();
        FakeCgroupTree.layOut(
                cgroup.directories().getFirst(),
                Map.of(
                        "memory.current", "4096\n",
                        "memory.stat", "anon 0\nfile 8192\ninactive_file 8192\n",
                        "cpu.stat", "usage_usec 1\nuser_usec 1\nsystem_usec 0\n"));

        assertThat(cgroup.stats().workingSetBytes()).isZero();
    }

    @Test
    void v1StatsComeFromMemoryAndCpuacctWithUserHzTicks() throws IOException {
        Cgroup cgroup = FakeCgroupTree.v1(root).cgroups().create(CgroupParent.own(), "t");
        FakeCgroupTree.layOut(
                root.resolve("sys/fs/cgroup/memory/agent/t"),
                Map.of(
                        "memory.usage_in_bytes", "8388608\n",
                        "memory.limit_in_bytes", "33554432\n",
                        "memory.stat",
                                "cache 2097152\nrss 4194304\nrss_huge 0\ninactive_file 1048576\n"
                                        + "total_rss 4194304\ntotal_inactive_file 3145728\n"));
        FakeCgroupTree.layOut(
                root.resolve("sys/fs/cgroup/cpu,cpuacct/t"),
                Map.of("cpuacct.usage", "3210000000\n", "cpuacct.stat", "user 250\nsystem 71\n"));

        assertThat(cgroup.stats())
                .isEqualTo(new CgroupStats(
                        8_388_608,
                        4_194_304,
                        2_097_152,
                        3_145_728,
                        33_554_432,
                        Duration.ofMillis(3210),
                        Duration.ofMillis(2500),
                        Duration.ofMillis(710)));
    }

    @Test
    void v1UnlimitedMemoryIsNoLimit() throws IOException {
        Cgroup cgroup = FakeCgroupTree.v1(root).cgroups().create(CgroupParent.own(), "t");
        FakeCgroupTree.layOut(
                root.resolve("sys/fs/cgroup/memory/agent/t"),
                Map.of(
                        "memory.usage_in_bytes", "8192\n",
                        "memory.limit_in_bytes", "9223372036854771712\n",
                        "memory.stat", "cache 0\nrss 8192\ntotal_inactive_file 0\n"));
        FakeCgroupTree.layOut(
                root.resolve("sys/fs/cgroup/cpu,cpuacct/t"),
                Map.of("cpuacct.usage", "1\n", "cpuacct.stat", "user 0\nsystem 0\n"));

        assertThat(cgroup.stats().memoryLimitBytes()).isZero();
        assertThat(cgroup.stats().workingSetBytes()).isEqualTo(8192);
    }

    @Test
    void v2CountsOomKillsFromMemoryEvents() throws IOException {
        Cgroup cgroup = v2();
        Path events = cgroup.directories().getFirst().resolve("memory.events");
        Files.writeString(events, "low 0\nhigh 0\nmax 14\noom 1\noom_kill 0\noom_group_kill 0\n");
        assertThat(cgroup.oomKilled()).isFalse();

        Files.writeString(events, "low 0\nhigh 0\nmax 20\noom 2\noom_kill 2\noom_group_kill 0\n");
        assertThat(cgroup.oomKills()).isEqualTo(2);
        assertThat(cgroup.oomKilled()).isTrue();
    }

    @Test
    void v1CountsOomKillsFromOomControl() throws IOException {
        Path memory = root.resolve("sys/fs/cgroup/memory/agent/t");
        Cgroup cgroup = FakeCgroupTree.v1(root).cgroups().create(CgroupParent.own(), "t");
        FakeCgroupTree.layOut(
                memory,
                Map.of("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "memory.failcnt", "7\n"));

        assertThat(cgroup.oomKills()).isEqualTo(1);
    }

    @Test
    void anOldV1KernelWithoutAnOomCountTellsByTheLimitBeingHit() throws IOException {
        Path memory = root.resolve("sys/fs/cgroup/memory/agent/t");
        Cgroup cgroup = FakeCgroupTree.v1(root).cgroups().create(CgroupParent.own(), "t");
        FakeCgroupTree.layOut(
                memory, Map.of("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n", "memory.failcnt", "0\n"));
        assertThat(cgroup.oomKilled()).isFalse();

        Files.writeString(memory.resolve("memory.failcnt"), "3\n");
        assertThat(cgroup.oomKilled()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "anon -5\nfile 0\n",
                "anon 99999999999999999999\nfile 0\n",
                "anon 1 2\nfile 0\n",
                "anon\nfile 0\n",
                "an;on 1\nfile 0\n",
                "anon 0x10\nfile 0\n",
            })
    void aGarbledStatFileIsAnErrorNamingIt(String memoryStat) throws IOException {
        Cgroup cgroup = v2();
        FakeCgroupTree.layOut(
                cgroup.directories().getFirst(),
                Map.of("memory.current", "1\n", "memory.stat", memoryStat, "cpu.stat", "usage_usec 1\n"));

        assertThatThrownBy(cgroup::stats).isInstanceOf(IOException.class).hasMessageContaining("memory.stat");
    }

    @Test
    void aStatFileMissingAFieldSaysWhich() throws IOException {
        Cgroup cgroup = v2();
        FakeCgroupTree.layOut(
                cgroup.directories().getFirst(),
                Map.of("memory.current", "1\n", "memory.stat", "anon 1\n", "cpu.stat", "usage_usec 1\n"));

        assertThatThrownBy(cgroup::stats).hasMessageEndingWith("memory.stat has no file line");
    }

    @Test
    void anEndlessCgroupFileIsReadOnlyAFewKibibytesOf() throws IOException {
        Cgroup cgroup = v2();
        Path dir = cgroup.directories().getFirst();
        Files.writeString(dir.resolve("memory.events"), "oom_kill 0\n".repeat(100_000));

        assertThatThrownBy(cgroup::oomKills).hasMessageContaining("holds more than 16384 bytes");
    }

    @Test
    void aCgroupFileThatIsALinkIsNotRead() throws IOException {
        Cgroup cgroup = v2();
        Path secret = Files.writeString(root.resolve("secret"), "oom_kill 0\n");
        Files.createSymbolicLink(cgroup.directories().getFirst().resolve("memory.events"), secret);

        assertThatThrownBy(cgroup::oomKills).hasMessageContaining("symbolic link");
    }

    @Test
    void aCgroupFileThatIsALinkIsNotWritten() throws IOException {
        Cgroup cgroup = v2();
        Path target = Files.writeString(root.resolve("target"), "untouched");
        Files.createSymbolicLink(cgroup.directories().getFirst().resolve("pids.max"), target);

        assertThatThrownBy(() -> cgroup.apply(new CgroupLimits(0, 0, false, 5))).isInstanceOf(IOException.class);
        assertThat(Files.readString(target)).isEqualTo("untouched");
    }

    @Test
    void aVeryLongProcessListIsTakenAPrefixOfWholeLinesAtATime() throws IOException {
        Cgroup cgroup = v2();
        StringBuilder procs = new StringBuilder();
        for (int pid = 1_000_000; pid < 1_020_000; pid++) {
            procs.append(pid).append('\n');
        }
        Files.writeString(cgroup.directories().getFirst().resolve("cgroup.procs"), procs);

        assertThat(cgroup.pids())
                .hasSize(CgroupFiles.PIDS_LIMIT / 8)
                .startsWith(1_000_000L)
                .allMatch(pid -> pid >= 1_000_000 && pid < 1_020_000);
    }

    @Test
    void removeTakesTheCgroupOutOfEveryHierarchy() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.parse("drover"), "t");

        cgroup.remove(Duration.ofSeconds(1));

        assertThat(cgroup.directories()).allMatch(dir -> !Files.exists(dir));
        assertThat(root.resolve("sys/fs/cgroup/memory/agent/drover")).isDirectory(); // the parent stays
        cgroup.remove(Duration.ofSeconds(1)); // gone already: no error
    }

    @Test
    void removeTakesTheCgroupsBelowFirstAndRefusesWhileOneHoldsAProcess() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        Path dir = cgroup.directories().getFirst();
        Files.createDirectories(dir.resolve("inner/deeper"));
        Files.createDirectories(dir.resolve("other"));
        Path procs = Files.writeString(dir.resolve("inner/deeper/cgroup.procs"), "701\n");

        assertThatThrownBy(() -> cgroup.remove(Duration.ofSeconds(1)))
                .hasMessageContaining("(or a cgroup in it) still holds processes 701; kill them first");
        assertThat(dir.resolve("other")).isDirectory(); // nothing is removed while a process is left

        Files.delete(procs);
        cgroup.remove(Duration.ofSeconds(1));
        assertThat(dir).doesNotExist();
    }

    @Test
    void aCgroupWithProcessesIsNotRemoved() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        Files.writeString(cgroup.directories().getFirst().resolve("cgroup.procs"), "501\n");

        assertThatThrownBy(() -> cgroup.remove(Duration.ofSeconds(1)))
                .hasMessageContaining("still holds processes 501; kill them first");
        assertThat(cgroup.directories().getFirst()).isDirectory();
    }

    @Test
    void aBusyCgroupIsRetriedForABoundedTime() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        Files.writeString(cgroup.directories().getFirst().resolve("leftover"), ""); // rmdir fails as if busy

        assertThatThrownBy(() -> cgroup.remove(Duration.ofMillis(200)))
                .hasMessageContaining("cannot remove cgroup t")
                .hasMessageContaining("within 200ms");
        assertThat(tree.nanoTime())
                .isGreaterThanOrEqualTo(Duration.ofMillis(200).toNanos());
    }

    private Cgroup v2() throws IOException {
        return FakeCgroupTree.v2(root).cgroups().create(CgroupParent.own(), "t");
    }
}
