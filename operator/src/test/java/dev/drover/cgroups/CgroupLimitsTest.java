package dev.drover.cgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CgroupLimitsTest {

    @TempDir
    Path root;

    @ParameterizedTest
    @CsvSource({
        // millis, shares, weight: Kubernetes' MilliCPUToShares and CpuSharesToCpuWeight
        "1, 2, 1",
        "10, 10, 1",
        "100, 102, 4",
        "250, 256, 10",
        "1000, 1024, 39",
        "4000, 4096, 157",
        "256000, 262144, 10000",
        "1000000, 262144, 10000",
    })
    void cpuMillisBecomeSharesAndWeightAsKubernetesConvertsThem(long millis, long shares, long weight) {
        assertThat(CgroupLimits.cpuShares(millis)).isEqualTo(shares);
        assertThat(CgroupLimits.cpuWeight(shares)).isEqualTo(weight);
    }

    @ParameterizedTest
    @CsvSource({"1, 1000", "5, 1000", "10, 1000", "250, 25000", "1500, 150000"})
    void aHardLimitIsAQuotaPerHundredMillisecondsOfAtLeastOneMillisecond(long millis, long quota) {
        assertThat(CgroupLimits.cpuQuotaMicros(millis)).isEqualTo(quota);
    }

    @Test
    void impossibleLimitsAreRefused() {
        assertThatThrownBy(() -> new CgroupLimits(-1, 0, false, 0)).hasMessageContaining("memory");
        assertThatThrownBy(() -> new CgroupLimits(0, 2_000_000, false, 0)).hasMessageContaining("millicores");
        assertThatThrownBy(() -> new CgroupLimits(0, 0, true, 0)).hasMessageContaining("hard CPU limit");
        assertThatThrownBy(() -> new CgroupLimits(0, 0, false, 5_000_000)).hasMessageContaining("pids");
    }

    @Test
    void v2LimitsAreWrittenWithSwapOff() throws IOException {
        Cgroup cgroup = FakeCgroupTree.v2(root).cgroups().create(CgroupParent.own(), "t");
        Path dir = cgroup.directories().getFirst();
        FakeCgroupTree.layOut(dir, v2Files());

        cgroup.apply(new CgroupLimits(64L << 20, 500, true, 128));

        assertThat(FakeCgroupTree.read(dir.resolve("memory.max"))).isEqualTo("67108864");
        assertThat(FakeCgroupTree.read(dir.resolve("memory.swap.max"))).isEqualTo("0");
        assertThat(FakeCgroupTree.read(dir.resolve("cpu.weight"))).isEqualTo("20");
        assertThat(FakeCgroupTree.read(dir.resolve("cpu.max"))).isEqualTo("50000 100000");
        assertThat(FakeCgroupTree.read(dir.resolve("pids.max"))).isEqualTo("128");
    }

    @Test
    void limitsNotSetAreNotWritten() throws IOException {
        Cgroup cgroup = FakeCgroupTree.v2(root).cgroups().create(CgroupParent.own(), "t");
        Path dir = cgroup.directories().getFirst();
        FakeCgroupTree.layOut(dir, v2Files());

        cgroup.apply(CgroupLimits.NONE);
        cgroup.apply(new CgroupLimits(0, 1000, false, 0));

        assertThat(FakeCgroupTree.read(dir.resolve("memory.max"))).isEqualTo("max");
        assertThat(FakeCgroupTree.read(dir.resolve("memory.swap.max"))).isEqualTo("max");
        assertThat(FakeCgroupTree.read(dir.resolve("cpu.weight"))).isEqualTo("39");
        assertThat(FakeCgroupTree.read(dir.resolve("cpu.max"))).isEqualTo("max 100000");
        assertThat(FakeCgroupTree.read(dir.resolve("pids.max"))).isEqualTo("max");
    }

    @Test
    void v2WithoutSwapAccountingLimitsMemoryAlone() throws IOException {
        Cgroup cgroup = FakeCgroupTree.v2(root).cgroups().create(CgroupParent.own(), "t");
        Path dir = cgroup.directories().getFirst();
        FakeCgroupTree.layOut(dir, Map.of("memory.max", "max\n"));

        cgroup.apply(new CgroupLimits(1 << 20, 0, false, 0));

        assertThat(FakeCgroupTree.read(dir.resolve("memory.max"))).isEqualTo("1048576");
        assertThat(dir.resolve("memory.swap.max")).doesNotExist();
    }

    @Test
    void aLimitWhoseControllerIsNotEnabledIsAnErrorNamingTheFile() throws IOException {
        Cgroup cgroup = FakeCgroupTree.v2(root).cgroups().create(CgroupParent.own(), "t");

        assertThatThrownBy(() -> cgroup.apply(new CgroupLimits(0, 0, false, 10)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("pids.max");
    }

    @Test
    void v1LimitsGoToEachControllersHierarchy() throws IOException {
        Cgroup cgroup = FakeCgroupTree.v1(root).cgroups().create(CgroupParent.own(), "t");
        Path cgroupRoot = root.resolve("sys/fs/cgroup");
        Path memory = cgroupRoot.resolve("memory/agent/t");
        Path cpu = cgroupRoot.resolve("cpu,cpuacct/t");
        Path pids = cgroupRoot.resolve("pids/t");
        String unlimited = "9223372036854771712\n";
        FakeCgroupTree.layOut(
                memory, Map.of("memory.limit_in_bytes", unlimited, "memory.memsw.limit_in_bytes", unlimited));
        FakeCgroupTree.layOut(
                cpu, Map.of("cpu.shares", "1024\n", "cpu.cfs_period_us", "100000\n", "cpu.cfs_quota_us", "-1\n"));
        FakeCgroupTree.layOut(pids, Map.of("pids.max", "max\n"));

        cgroup.apply(new CgroupLimits(32L << 20, 250, true, 64));

        assertThat(FakeCgroupTree.read(memory.resolve("memory.limit_in_bytes"))).isEqualTo("33554432");
        assertThat(FakeCgroupTree.read(memory.resolve("memory.memsw.limit_in_bytes")))
                .isEqualTo("33554432");
        assertThat(FakeCgroupTree.read(cpu.resolve("cpu.shares"))).isEqualTo("256");
        assertThat(FakeCgroupTree.read(cpu.resolve("cpu.cfs_period_us"))).isEqualTo("100000");
        assertThat(FakeCgroupTree.read(cpu.resolve("cpu.cfs_quota_us"))).isEqualTo("25000");
        assertThat(FakeCgroupTree.read(pids.resolve("pids.max"))).isEqualTo("64");
    }

    @Test
    void v1SharesWithoutAHardLimitLeaveTheQuotaUnlimited() throws IOException {
        Cgroup cgroup = FakeCgroupTree.v1(root).cgroups().create(CgroupParent.own(), "t");
        Path cpu = root.resolve("sys/fs/cgroup/cpu,cpuacct/t");
        FakeCgroupTree.layOut(cpu, Map.of("cpu.shares", "1024\n", "cpu.cfs_quota_us", "-1\n"));

        cgroup.apply(new CgroupLimits(0, 2000, false, 0));

        assertThat(FakeCgroupTree.read(cpu.resolve("cpu.shares"))).isEqualTo("2048");
        assertThat(FakeCgroupTree.read(cpu.resolve("cpu.cfs_quota_us"))).isEqualTo("-1");
    }

    @Test
    void aV1NodeWithoutAMemoryHierarchySaysSo() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        tree.write(
                "proc/self/mountinfo", "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n");
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");

        assertThatThrownBy(() -> cgroup.apply(new CgroupLimits(1 << 20, 0, false, 0)))
                .hasMessageContaining("cannot limit memory of cgroup t: no memory hierarchy is mounted");
    }

    private static Map<String, String> v2Files() {
        return Map.of(
                "memory.max", "max\n",
                "memory.swap.max", "max\n",
                "cpu.weight", "100\n",
                "cpu.max", "max 100000\n",
                "pids.max", "max\n");
    }
}
