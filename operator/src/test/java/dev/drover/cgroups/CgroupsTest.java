package dev.drover.cgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CgroupsTest {

    @TempDir
    Path root;

    @Test
    void v1CreateMakesTheCgroupInEveryHierarchyBelowThisProcesssOwn() throws IOException {
        Cgroups cgroups = FakeCgroupTree.v1(root).cgroups();

        Cgroup cgroup = cgroups.create(CgroupParent.parse("drover"), "alloc1.web");

        Path base = root.resolve("sys/fs/cgroup");
        assertThat(cgroup.directories())
                .containsExactlyInAnyOrder(
                        base.resolve("cpu,cpuacct/drover/alloc1.web"),
                        base.resolve("memory/agent/drover/alloc1.web"),
                        base.resolve("pids/drover/alloc1.web"),
                        base.resolve("freezer/drover/alloc1.web"),
                        base.resolve("devices/drover/alloc1.web"));
        assertThat(cgroup.directories()).allMatch(Files::isDirectory);
    }

    @Test
    void aCgroupNamesTheCgroupsInItButNotLinksOrFiles() throws IOException {
        Cgroups cgroups = FakeCgroupTree.v1(root).cgroups();
        cgroups.create(CgroupParent.parse("drover"), "a");
        cgroups.create(CgroupParent.parse("drover"), "b");
        Cgroup parent = cgroups.find(CgroupParent.own(), "drover").orElseThrow();
        Path dir = parent.directories().getFirst();
        Files.createSymbolicLink(dir.resolve("link"), root);
        Files.writeString(dir.resolve("cgroup.procs"), "");

        assertThat(parent.childNames()).containsExactly("a", "b");
    }

    @Test
    void anAbsoluteParentStartsAtTheTopOfTheHierarchy() throws IOException {
        Cgroups cgroups = FakeCgroupTree.v1(root).cgroups();

        Cgroup cgroup = cgroups.create(CgroupParent.parse("/drover.slice"), "t");

        assertThat(cgroup.directories()).contains(root.resolve("sys/fs/cgroup/memory/drover.slice/t"));
    }

    @Test
    void aCgroupIsFoundAgainAfterARestartAndAMissingOneIsNot() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        List<Path> made =
                tree.cgroups().create(CgroupParent.parse("drover"), "t").directories();

        Cgroups afterRestart = tree.cgroups();

        assertThat(afterRestart
                        .find(CgroupParent.parse("drover"), "t")
                        .orElseThrow()
                        .directories())
                .isEqualTo(made);
        assertThat(afterRestart.find(CgroupParent.parse("drover"), "other")).isEmpty();
        assertThat(afterRestart.find(CgroupParent.parse("elsewhere"), "t")).isEmpty();
    }

    @Test
    void v2CreateEnablesTheTaskControllersOnTheWayDown() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Cgroups cgroups = tree.cgroups();
        // the kernel would make these files in the new parent; the fake lays them out in advance
        FakeCgroupTree.layOut(
                root.resolve("sys/fs/cgroup/agent/drover"),
                java.util.Map.of("cgroup.controllers", "cpu memory pids\n", "cgroup.subtree_control", "memory\n"));

        Cgroup cgroup = cgroups.create(CgroupParent.parse("drover"), "t");

        assertThat(cgroup.directories()).containsExactly(root.resolve("sys/fs/cgroup/agent/drover/t"));
        assertThat(FakeCgroupTree.read(root.resolve("sys/fs/cgroup/agent/cgroup.subtree_control")))
                .isEqualTo("+cpu +memory +pids");
        assertThat(FakeCgroupTree.read(root.resolve("sys/fs/cgroup/agent/drover/cgroup.subtree_control")))
                .isEqualTo("+cpu +pids"); // memory was on already
        assertThat(cgroups.description()).isEqualTo("cgroup v2");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "..",
                ".",
                "../escape",
                "a/b",
                "/abs",
                "",
                ".hidden",
                "a..b",
                "cgroup.procs",
                "tab\tname",
                "new\nline",
                "späce",
                "a b"
            })
    void namesThatCouldLeaveTheParentOrConfuseTheKernelAreRefused(String name) throws IOException {
        Cgroups cgroups = FakeCgroupTree.v1(root).cgroups();

        assertThatThrownBy(() -> cgroups.create(CgroupParent.parse("drover"), name))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cgroup name");
        assertThat(root.resolve("sys/fs/cgroup/memory/agent/drover")).doesNotExist();
    }

    @Test
    void aLongNameIsRefusedWithItsLength() throws IOException {
        Cgroups cgroups = FakeCgroupTree.v1(root).cgroups();

        assertThatThrownBy(() -> cgroups.create(CgroupParent.own(), "x".repeat(129)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("(129 characters)")
                .hasMessageContaining("longer than 128");
        assertThat(CgroupParent.requireName("x".repeat(128))).hasSize(128);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/a/../b", "a//b", "a/", "../up", "/" + "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q"})
    void parentsThatCouldClimbOutAreRefused(String parent) {
        assertThatThrownBy(() -> CgroupParent.parse(parent)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aParentThatIsALinkIsRefusedAndNothingIsMadeWhereItPoints() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        Path outside = Files.createDirectories(root.resolve("outside"));
        Files.createSymbolicLink(root.resolve("sys/fs/cgroup/memory/agent/drover"), outside);
        Cgroups cgroups = tree.cgroups();

        assertThatThrownBy(() -> cgroups.create(CgroupParent.parse("drover"), "t"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("symbolic link");
        assertThatThrownBy(() -> cgroups.find(CgroupParent.parse("drover"), "t"))
                .hasMessageContaining("symbolic link");
        assertThat(outside).isEmptyDirectory();
    }

    @Test
    void aCgroupThatIsALinkIsNeitherTakenNorFound() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Path outside = Files.createDirectories(root.resolve("outside"));
        Files.createSymbolicLink(root.resolve("sys/fs/cgroup/agent/t"), outside);
        Cgroups cgroups = tree.cgroups();

        assertThatThrownBy(() -> cgroups.create(CgroupParent.own(), "t")).hasMessageContaining("symbolic link");
        assertThatThrownBy(() -> cgroups.find(CgroupParent.own(), "t")).hasMessageContaining("symbolic link");
    }

    @Test
    void anOwnCgroupReachedThroughALinkIsRefused() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Path outside = Files.createDirectories(root.resolve("outside"));
        Path agent = root.resolve("sys/fs/cgroup/agent");
        try (var files = Files.list(agent)) {
            for (Path f : files.toList()) {
                Files.delete(f);
            }
        }
        Files.delete(agent);
        Files.createSymbolicLink(agent, outside);

        assertThatThrownBy(() -> tree.cgroups().create(CgroupParent.parse("drover"), "t"))
                .hasMessageContaining("symbolic link");
        assertThat(outside).isEmptyDirectory();
    }

    @Test
    void aFileWhereACgroupShouldBeIsNoCgroup() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        tree.write("sys/fs/cgroup/agent/t", "not a directory");

        assertThatThrownBy(() -> tree.cgroups().create(CgroupParent.own(), "t"))
                .hasMessageContaining("not a directory");
    }

    @Test
    void aV1ChildThatCannotBeMadeInEveryHierarchyLeavesNoneOfItsDirectories() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        Cgroup task = tree.cgroups().create(CgroupParent.parse("drover"), "t");
        Path blocked = tree.write("sys/fs/cgroup/devices/drover/t/exec", "no cgroup"); // the last hierarchy made in

        assertThatThrownBy(() -> task.createChild("exec"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not a directory");

        assertThat(task.childNames()).isEmpty();
        assertThat(blocked).hasContent("no cgroup"); // what was there already is left as it was
    }

    @Test
    void aV1CgroupThatCannotBeMadeInEveryHierarchyLeavesNoneOfItsDirectories() throws IOException {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        Cgroups cgroups = tree.cgroups();
        cgroups.create(CgroupParent.own(), "drover");
        Path taken = Files.createDirectory(root.resolve("sys/fs/cgroup/memory/agent/drover/t")); // from a crash
        Path blocked = tree.write("sys/fs/cgroup/devices/drover/t", "no cgroup"); // the last hierarchy made in

        assertThatThrownBy(() -> cgroups.create(CgroupParent.parse("drover"), "t"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not a directory");

        Path base = root.resolve("sys/fs/cgroup");
        assertThat(List.of("cpu,cpuacct", "pids", "freezer"))
                .allMatch(hierarchy -> !Files.exists(base.resolve(hierarchy).resolve("drover/t")));
        assertThat(taken).isDirectory(); // the one it found there, not one it made
        assertThat(blocked).hasContent("no cgroup");
    }
}
