package dev.drover.cgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kill protocols, on fake trees where {@link FakeCgroupTree} plays the kernel. */
class CgroupKillTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    /** A walk limit far below {@link Subtree#LIMIT}, so a test makes dozens of cgroups, not thousands. */
    private static final int SMALL_LIMIT = 20;

    @TempDir
    Path root;

    @Test
    void v2WithCgroupKillLetsTheKernelKillThemAllWithoutASignalFromUs() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        Path dir = cgroup.directories().getFirst();
        FakeCgroupTree.layOut(dir, Map.of("cgroup.procs", "101\n102\n", "cgroup.kill", "0\n", "cgroup.freeze", "0\n"));
        tree.onPause = () -> {
            if (FakeCgroupTree.read(dir.resolve("cgroup.kill")).equals("1")) {
                tree.write(dir.resolve("cgroup.procs").toString(), "");
            }
        };

        cgroup.killAll(TIMEOUT);

        assertThat(tree.killed).isEmpty();
        assertThat(cgroup.pids()).isEmpty();
        assertThat(FakeCgroupTree.read(dir.resolve("cgroup.freeze"))).isEqualTo("0"); // never frozen
    }

    @Test
    void v2WithoutCgroupKillFreezesSignalsEachProcessAndThaws() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        Path dir = cgroup.directories().getFirst();
        FakeCgroupTree.layOut(
                dir, Map.of("cgroup.procs", "101\n102\n103\n", "cgroup.freeze", "0\n", "cgroup.events", "frozen 0\n"));
        List<String> freezeAtKill = new ArrayList<>();
        tree.onPause = () -> tree.write(dir.resolve("cgroup.events").toString(), "populated 1\nfrozen 1\n");
        tree.onKill = pid -> {
            freezeAtKill.add(FakeCgroupTree.read(dir.resolve("cgroup.freeze")));
            FakeCgroupTree.removePid(dir.resolve("cgroup.procs"), pid);
        };

        cgroup.killAll(TIMEOUT);

        assertThat(tree.killed).containsExactly(101L, 102L, 103L);
        assertThat(freezeAtKill).containsOnly("1");
        assertThat(FakeCgroupTree.read(dir.resolve("cgroup.freeze"))).isEqualTo("0");
        assertThat(cgroup.pids()).isEmpty();
    }

    @Test
    void v2WithoutCgroupKillSignalsTheProcessesOfTheCgroupsBelowWhileFrozen() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        Path dir = cgroup.directories().getFirst();
        Path deeper = dir.resolve("inner/deeper");
        FakeCgroupTree.layOut(
                dir, Map.of("cgroup.procs", "101\n", "cgroup.freeze", "0\n", "cgroup.events", "frozen 1\n"));
        FakeCgroupTree.layOut(dir.resolve("inner"), Map.of("cgroup.procs", ""));
        FakeCgroupTree.layOut(deeper, Map.of("cgroup.procs", "102\n103\n"));
        List<String> freezeAtKill = new ArrayList<>();
        tree.onKill = pid -> {
            freezeAtKill.add(FakeCgroupTree.read(dir.resolve("cgroup.freeze")));
            FakeCgroupTree.removePid(dir.resolve("cgroup.procs"), pid);
            FakeCgroupTree.removePid(deeper.resolve("cgroup.procs"), pid);
        };

        assertThat(cgroup.pids()).containsExactly(101L, 102L, 103L);
        cgroup.killAll(TIMEOUT);

        assertThat(tree.killed).containsExactly(101L, 102L, 103L);
        assertThat(freezeAtKill).containsOnly("1");
        assertThat(cgroup.pids()).isEmpty();
    }

    @Test
    void v1ThawsTheCgroupsBelowThatTheTaskFrozeItselfSoTheKilledDie() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        Path freezer = root.resolve("sys/fs/cgroup/freezer/t");
        Path cold = freezer.resolve("cold");
        for (Path dir : cgroup.directories()) {
            FakeCgroupTree.layOut(dir, Map.of("cgroup.procs", ""));
        }
        FakeCgroupTree.layOut(freezer, Map.of("freezer.state", "THAWED\n"));
        FakeCgroupTree.layOut(cold, Map.of("freezer.state", "FROZEN\n", "cgroup.procs", "601\n"));
        tree.onKill = pid -> {};
        tree.onPause = () -> {
            if (FakeCgroupTree.read(cold.resolve("freezer.state")).equals("THAWED")) {
                tree.write(cold.resolve("cgroup.procs").toString(), ""); // the pending SIGKILL ends it once thawed
            }
        };

        cgroup.killAll(TIMEOUT);

        assertThat(tree.killed).containsOnly(601L);
        assertThat(FakeCgroupTree.read(cold.resolve("freezer.state"))).isEqualTo("THAWED");
        assertThat(FakeCgroupTree.read(freezer.resolve("freezer.state"))).isEqualTo("THAWED");
    }

    @Test
    void v1FreezesSignalsEveryProcessOfEveryHierarchyAndThaws() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        Path freezer = root.resolve("sys/fs/cgroup/freezer/t");
        Path memory = root.resolve("sys/fs/cgroup/memory/agent/t");
        for (Path dir : cgroup.directories()) {
            FakeCgroupTree.layOut(dir, Map.of("cgroup.procs", "201\n202\n"));
        }
        // one that escaped the freezer's cgroup is still killed: it is in the memory one
        FakeCgroupTree.layOut(memory, Map.of("cgroup.procs", "201\n202\n203\n"));
        FakeCgroupTree.layOut(freezer, Map.of("freezer.state", "THAWED\n"));
        List<String> stateAtKill = new ArrayList<>();
        tree.onKill = pid -> {
            stateAtKill.add(FakeCgroupTree.read(freezer.resolve("freezer.state")));
            for (Path dir : cgroup.directories()) {
                FakeCgroupTree.removePid(dir.resolve("cgroup.procs"), pid);
            }
        };

        cgroup.killAll(TIMEOUT);

        assertThat(tree.killed).containsExactlyInAnyOrder(201L, 202L, 203L);
        assertThat(stateAtKill).containsOnly("FROZEN");
        assertThat(FakeCgroupTree.read(freezer.resolve("freezer.state"))).isEqualTo("THAWED");
        assertThat(cgroup.pids()).isEmpty();
    }

    @Test
    void aProcessThatNeverDiesIsNamedAfterTheTimeoutAndTheCgroupIsLeftThawed() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        for (Path dir : cgroup.directories()) {
            FakeCgroupTree.layOut(dir, Map.of("cgroup.procs", "301\n"));
        }
        FakeCgroupTree.layOut(root.resolve("sys/fs/cgroup/freezer/t"), Map.of("freezer.state", "THAWED\n"));
        Path state = root.resolve("sys/fs/cgroup/freezer/t/freezer.state");
        FakeCgroupTree.layOut(state.getParent(), Map.of("freezer.state", "THAWED\n"));

        assertThatThrownBy(() -> cgroup.killAll(TIMEOUT))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("cgroup t still holds processes 301 after 5s");
        assertThat(tree.killed).hasSizeGreaterThan(1).containsOnly(301L); // signalled again each round
        assertThat(FakeCgroupTree.read(state)).isEqualTo("THAWED");
        assertThat(tree.nanoTime())
                .isBetween(TIMEOUT.toNanos(), TIMEOUT.plusSeconds(2).toNanos());
    }

    @Test
    void theAgentsOwnProcessIsNeverKilledNorAdded() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        Path dir = cgroup.directories().getFirst();
        long self = ProcessHandle.current().pid();
        FakeCgroupTree.layOut(dir, Map.of("cgroup.procs", "401\n" + self + "\n"));

        assertThatThrownBy(() -> cgroup.killAll(TIMEOUT)).hasMessageContaining("refusing to kill it");
        assertThat(tree.killed).isEmpty();
        assertThatThrownBy(() -> cgroup.add(self)).hasMessageContaining("own process");
        assertThatThrownBy(() -> cgroup.add(0)).hasMessageContaining("no process 0");
    }

    @Test
    void addWritesThePidToEachHierarchy() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        for (Path dir : cgroup.directories()) {
            FakeCgroupTree.layOut(dir, Map.of("cgroup.procs", ""));
        }

        cgroup.add(4242);

        for (Path dir : cgroup.directories()) {
            assertThat(FakeCgroupTree.read(dir.resolve("cgroup.procs"))).isEqualTo("4242");
        }
    }

    @Test
    void anEmptyCgroupIsDoneAtOnce() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Cgroup cgroup = tree.cgroups().create(CgroupParent.own(), "t");
        FakeCgroupTree.layOut(cgroup.directories().getFirst(), Map.of("cgroup.procs", ""));

        cgroup.killAll(TIMEOUT);

        assertThat(tree.nanoTime()).isZero();
        assertThat(tree.killed).isEmpty();
    }

    @Test
    void v2PastTheSubtreeLimitCgroupKillEndsEveryProcessAndEveryCgroupIsRemoved() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v2(root);
        Cgroup cgroup = tree.cgroups(SMALL_LIMIT).create(CgroupParent.own(), "t");
        Path dir = cgroup.directories().getFirst();
        FakeCgroupTree.layOut(
                dir, Map.of("cgroup.procs", "101\n", "cgroup.kill", "0\n", "cgroup.events", "populated 1\n"));
        List<Path> made = FakeCgroupTree.manyCgroups(dir, 3, SMALL_LIMIT); // 63 below: no walk takes them all in
        Path hidden = Files.writeString(made.getLast().resolve("cgroup.procs"), "102\n");
        tree.onPause = () -> { // the kernel: cgroup.kill ends every process below, seen or not
            if (FakeCgroupTree.read(dir.resolve("cgroup.kill")).equals("1")) {
                tree.write(dir.resolve("cgroup.procs").toString(), "");
                delete(hidden);
                tree.write(dir.resolve("cgroup.events").toString(), "populated 0\n");
            }
        };

        cgroup.killAll(TIMEOUT);
        FakeCgroupTree.dropFiles(dir);
        cgroup.remove(TIMEOUT);

        assertThat(tree.killed).isEmpty();
        assertThat(made).allMatch(below -> !Files.exists(below));
        assertThat(dir).doesNotExist();
    }

    @Test
    void v1PastTheSubtreeLimitRemovesTheEmptyCgroupsItSeesUntilItHasKilledEveryProcess() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        Cgroup cgroup = tree.cgroups(SMALL_LIMIT).create(CgroupParent.own(), "t");
        for (Path dir : cgroup.directories()) {
            FakeCgroupTree.layOut(dir, Map.of("cgroup.procs", "201\n"));
        }
        FakeCgroupTree.layOut(root.resolve("sys/fs/cgroup/freezer/t"), Map.of("freezer.state", "THAWED\n"));
        List<Path> made = FakeCgroupTree.manyCgroups(root.resolve("sys/fs/cgroup/memory/agent/t"), 3, SMALL_LIMIT);
        Path hidden = Files.writeString(made.getLast().resolve("cgroup.procs"), "202\n");
        tree.onKill = pid -> {
            for (Path dir : cgroup.directories()) {
                FakeCgroupTree.removePid(dir.resolve("cgroup.procs"), pid);
            }
            if (pid == 202) {
                delete(hidden); // its cgroup holds nothing now: rmdir lets it go
            }
        };

        cgroup.killAll(TIMEOUT);
        for (Path dir : cgroup.directories()) {
            FakeCgroupTree.dropFiles(dir);
        }
        cgroup.remove(TIMEOUT);

        assertThat(tree.killed).containsExactlyInAnyOrder(201L, 202L);
        assertThat(made).allMatch(below -> !Files.exists(below));
        assertThat(cgroup.directories()).allMatch(dir -> !Files.exists(dir));
    }

    @Test
    void aSubtreeNoWalkWithinTheLimitSeesWholeIsKilledAndRemovedAsFarAsItCanAndTheRestIsNamed() throws Exception {
        FakeCgroupTree tree = FakeCgroupTree.v1(root);
        Cgroup cgroup = tree.cgroups(SMALL_LIMIT).create(CgroupParent.own(), "t");
        for (Path dir : cgroup.directories()) {
            FakeCgroupTree.layOut(dir, Map.of("cgroup.procs", "301\n"));
        }
        FakeCgroupTree.layOut(root.resolve("sys/fs/cgroup/freezer/t"), Map.of("freezer.state", "THAWED\n"));
        Path memory = root.resolve("sys/fs/cgroup/memory/agent/t");
        List<Path> made = FakeCgroupTree.manyCgroups(memory, 10, 0);
        Path deep = memory;
        for (int level = 0; level < SMALL_LIMIT + 5; level++) { // deeper than a walk reaches: never seen whole
            deep = Files.createDirectory(deep.resolve("deep"));
        }
        Files.writeString(deep.resolve("cgroup.procs"), "302\n");
        tree.onKill = pid -> {
            for (Path dir : cgroup.directories()) {
                FakeCgroupTree.removePid(dir.resolve("cgroup.procs"), pid);
            }
        };

        // one round within the time: it removes the empty cgroups seen and kills what it sees, not what it cannot
        assertThatThrownBy(() -> cgroup.killAll(Duration.ofMillis(200)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("cgroup t has more cgroups below it than the 20 one walk takes in")
                .hasMessageContaining("after 200ms of killing")
                .hasMessageContaining("processes may still run");
        assertThat(tree.killed).containsOnly(301L); // all it could see
        for (Path dir : cgroup.directories()) {
            FakeCgroupTree.dropFiles(dir);
        }
        assertThatThrownBy(() -> cgroup.remove(Duration.ofMillis(200)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("cannot remove cgroup t within 200ms")
                .hasMessageContaining(memory.resolve("deep").toString());
        assertThat(made).allMatch(below -> !Files.exists(below));
        assertThat(cgroup.directories().stream().filter(Files::exists)).containsExactly(memory); // the others went
    }

    private static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
