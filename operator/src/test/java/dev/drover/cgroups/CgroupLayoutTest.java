package dev.drover.cgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CgroupLayoutTest {

    @TempDir
    Path root;

    @Test
    void unifiedTreeIsV2WithItsControllersAndThisProcesssCgroup() throws IOException {
        FakeCgroupTree.v2(root);

        CgroupLayout layout = CgroupLayout.detect(root);

        assertThat(layout.version()).isEqualTo(CgroupVersion.V2);
        assertThat(layout.description()).isEqualTo("cgroup v2");
        Hierarchy unified = layout.hierarchy("memory").orElseThrow();
        assertThat(unified.mountPoint()).isEqualTo(root.resolve("sys/fs/cgroup"));
        assertThat(unified.ownCgroup()).isEqualTo("/agent");
        assertThat(unified.controllers()).contains("cpu", "memory", "pids", "io");
    }

    @Test
    void v1ControllersBesideAnEmptyV2TreeAreV1WithEachHierarchysOwnCgroup() throws IOException {
        FakeCgroupTree.v1(root);

        CgroupLayout layout = CgroupLayout.detect(root);

        assertThat(layout.version()).isEqualTo(CgroupVersion.V1);
        assertThat(layout.description()).isEqualTo("cgroup v1 (cpu,cpuacct,memory,pids,freezer,devices)");
        assertThat(layout.hierarchies()).hasSize(5); // cpu and cpuacct share one
        Hierarchy cpu = layout.hierarchy("cpu").orElseThrow();
        assertThat(layout.hierarchy("cpuacct")).contains(cpu);
        assertThat(cpu.controllers()).isEqualTo(Set.of("cpu", "cpuacct"));
        assertThat(cpu.mountPoint()).isEqualTo(root.resolve("sys/fs/cgroup/cpu,cpuacct"));
        assertThat(layout.hierarchy("memory").orElseThrow().ownCgroup()).isEqualTo("/agent");
        assertThat(layout.hierarchy("freezer").orElseThrow().ownCgroup()).isEqualTo("/");
    }

    @Test
    void aV1NodeWithoutSomeControllersNamesOnlyThoseItHas() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        tree.write("proc/self/mountinfo", """
                35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
                37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
                """);

        assertThat(CgroupLayout.detect(root).description()).isEqualTo("cgroup v1 (memory,freezer)");
    }

    @Test
    void mountPointsWithEscapedSpacesAreDecoded() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        tree.write("proc/self/mountinfo", "31 22 0:28 / /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw\n");
        tree.write("sys/fs/my cgroup/cgroup.controllers", "memory\n");

        Hierarchy h = CgroupLayout.detect(root).hierarchies().getFirst();

        assertThat(h.mountPoint()).isEqualTo(root.resolve("sys/fs/my cgroup"));
    }

    @Test
    void aNodeWithoutCgroupsIsAnErrorNamingMountinfo() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        tree.write("proc/self/mountinfo", "22 1 0:21 / / rw,relatime - ext4 /dev/vda rw\n");

        assertThatThrownBy(() -> CgroupLayout.detect(root))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no cgroup hierarchy")
                .hasMessageContaining("mountinfo");
    }

    @Test
    void anOwnCgroupThatClimbsOutOfTheHierarchyIsRefused() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        tree.write("proc/self/cgroup", "0::/agent/../../../etc\n");

        assertThatThrownBy(() -> CgroupLayout.detect(root))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("\"..\" segment");
    }

    @Test
    void aMountPointThatClimbsOutOfTheRootIsRefused() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        tree.write("proc/self/mountinfo", "31 22 0:28 / /sys/../../../tmp rw - cgroup2 cgroup2 rw\n");

        assertThatThrownBy(() -> CgroupLayout.detect(root))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("mountinfo");
    }

    @Test
    void aGarbledCgroupLineIsAnErrorQuotingIt() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        tree.write("proc/self/cgroup", "garbage\u0007\n");

        assertThatThrownBy(() -> CgroupLayout.detect(root))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("\"garbage\\u0007\"");
    }
}
