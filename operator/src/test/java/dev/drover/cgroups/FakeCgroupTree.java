package dev.drover.cgroups;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;

/**
 * A cgroup tree laid out in a temporary directory as the kernel lays out /proc/self and /sys/fs/cgroup, and a
 * {@link ProcessControl} that plays the kernel: its clock moves only when the code pauses, each pause runs
 * {@link #onPause}, and each kill runs {@link #onKill}.
 */
final class FakeCgroupTree implements ProcessControl {

    final Path root;
    final List<Long> killed = new ArrayList<>();
    private long now;
    Runnable onPause = () -> {};
    LongConsumer onKill = pid -> {};

    private FakeCgroupTree(Path root) {
        this.root = root;
    }

    /** A unified tree at /sys/fs/cgroup offering cpu, memory, pids and io; this process in /agent. */
    static FakeCgroupTree v2(Path root) throws IOException {
        FakeCgroupTree tree = new FakeCgroupTree(root);
        tree.write("proc/self/mountinfo", """
                22 1 0:21 / / rw,relatime - ext4 /dev/vda rw
                31 22 0:28 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate
                """);
        tree.write("proc/self/cgroup", "0::/agent\n");
        tree.write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
        tree.write("sys/fs/cgroup/cgroup.subtree_control", "cpu memory pids\n");
        tree.write("sys/fs/cgroup/agent/cgroup.controllers", "cpu memory pids\n");
        tree.write("sys/fs/cgroup/agent/cgroup.subtree_control", "\n");
        return tree;
    }

    /**
     * A hybrid v1 node: cpu and cpuacct mounted together, memory, pids, freezer and devices each alone, systemd's
     * named hierarchy and an empty v2 tree beside them; this process's memory cgroup is /agent, the others /.
     */
    static FakeCgroupTree v1(Path root) throws IOException {
        FakeCgroupTree tree = new FakeCgroupTree(root);
        tree.write("proc/self/mountinfo", """
                22 1 0:21 / / rw,relatime - ext4 /dev/vda rw
                31 22 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
                32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
                35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
                36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
                37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
                39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
                40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
                41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
                """);
        tree.write("proc/self/cgroup", """
                9:name=systemd:/
                8:pids:/
                6:freezer:/
                5:devices:/
                4:memory:/agent
                2:cpu,cpuacct:/
                0::/
                """);
        for (String dir : List.of("cpu,cpuacct", "memory/agent", "devices", "freezer", "pids", "unified")) {
            Files.createDirectories(root.resolve("sys/fs/cgroup").resolve(dir));
        }
        return tree;
    }

    /** Writes {@code text} at {@code path} below the root, making the directories on the way. */
    Path write(String path, String text) {
        Path file = root.resolve(path);
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /** The kernel's files of a cgroup directory, {@code name → content}. */
    static void layOut(Path dir, Map<String, String> files) throws IOException {
        Files.createDirectories(dir);
        for (Map.Entry<String, String> f : files.entrySet()) {
            Files.writeString(dir.resolve(f.getKey()), f.getValue());
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file).strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Drops {@code pid} from a cgroup.procs file, as the kernel does when the process dies. */
    static void removePid(Path procs, long pid) {
        try {
            List<String> left = new ArrayList<>(Files.readAllLines(procs));
            left.remove(Long.toString(pid));
            Files.write(procs, left);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Cgroups cgroups() throws IOException {
        return Cgroups.detect(root, this);
    }

    /** Cgroups whose kills and removals walk at most {@code subtreeLimit} cgroups at a time. */
    Cgroups cgroups(int subtreeLimit) throws IOException {
        return Cgroups.detect(root, this, subtreeLimit);
    }

    /**
     * What a task run as root may make inside its cgroup {@code top}: {@code wide} cgroups directly in it, each
     * with {@code each} inside; returned in the order made, the last made last.
     */
    static List<Path> manyCgroups(Path top, int wide, int each) throws IOException {
        List<Path> made = new ArrayList<>();
        for (int i = 0; i < wide; i++) {
            Path outer = Files.createDirectory(top.resolve("made" + i));
            made.add(outer);
            for (int j = 0; j < each; j++) {
                made.add(Files.createDirectory(outer.resolve("inner" + j)));
            }
        }
        return made;
    }

    /**
     * Deletes the files the fake laid out in {@code dir}: rmdir(2) of a cgroup takes its control files with it, of
     * a plain directory only once they are gone.
     */
    static void dropFiles(Path dir) throws IOException {
        try (var entries = Files.list(dir)) {
            for (Path f : entries.filter(Files::isRegularFile).toList()) {
                Files.delete(f);
            }
        }
    }

    @Override
    public void kill(long pid) {
        killed.add(pid);
        onKill.accept(pid);
    }

    @Override
    public void pause(Duration pause) {
        now += pause.toNanos();
        onPause.run();
    }

    @Override
    public long nanoTime() {
        return now;
    }
}
