package dev.drover.cgroups;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * One cgroup Drover made for a task: on v2 one directory, on v1 one in each controller's hierarchy. Made with
 * {@link Cgroups#create}, found again after an agent restart with {@link Cgroups#find}. Its processes, its kill and
 * its removal take in the cgroups below it too, in any of its hierarchies: a task run as root may make some and move
 * processes there.
 */
public sealed interface Cgroup permits CgroupV1, CgroupV2 {

    /** Its name, the last segment of its path. */
    String name();

    /** Its directories: one on v2, one per hierarchy on v1. */
    List<Path> directories();

    /** The names of the cgroups directly in it, in any of its directories; links are not followed. */
    default Set<String> childNames() throws IOException {
        Set<String> names = new TreeSet<>();
        for (Path dir : directories()) {
            try (Stream<Path> children = Files.list(dir)) {
                children.filter(c -> Files.isDirectory(c, LinkOption.NOFOLLOW_LINKS))
                        .forEach(c -> names.add(c.getFileName().toString()));
            }
        }
        return names;
    }

    /** Writes the limits that are set; those at zero are left as they are. */
    void apply(CgroupLimits limits) throws IOException;

    /**
     * Makes cgroup {@code name} directly in it (on v1 in each of its hierarchies), with no controller enabled for it,
     * so that what its processes use counts against this cgroup's limits. One there already is taken as it is.
     */
    Cgroup createChild(String name) throws IOException;

    /** Moves process {@code pid} into it (on v1 into every hierarchy). This process itself is refused. */
    void add(long pid) throws IOException;

    /**
     * The processes in it and in the cgroups below it (on v1 in any of its hierarchies), at most a bounded prefix of
     * a very long list; an error when its task made more cgroups below it than one walk takes in (10 000).
     */
    List<Long> pids() throws IOException;

    /**
     * Ends every process in it and below it so none can escape by forking meanwhile: v2 writes cgroup.kill, or, on
     * kernels before 5.14, freezes it, sends SIGKILL to each process and thaws it; v1 does the same with the freezer
     * (and thaws the cgroups below, which a task may have frozen itself), or without one signals round after round.
     * Past the cgroups one walk takes in (10 000 below it), cgroup.kill still ends them all; otherwise each round
     * first removes the empty cgroups the walk saw, so the next sees further. Returns once it and those below are
     * empty; an error naming the processes left, or saying that cgroups are still out of sight, after {@code timeout}.
     */
    void killAll(Duration timeout) throws IOException, InterruptedException;

    /** Memory and CPU it has used. */
    CgroupStats stats() throws IOException;

    /**
     * How many of its processes the kernel's OOM killer has killed (v2 memory.events oom_kill, v1
     * memory.oom_control oom_kill). A v1 kernel too old to count (before 4.13) gives 1 once the memory limit was
     * ever hit (memory.failcnt above 0), which with swap off is when the OOM killer runs.
     */
    long oomKills() throws IOException;

    /**
     * How many times its memory use reached its limit (v1 memory.failcnt, v2 memory.events max), below too: a
     * v1 kernel counts an OOM kill only in the cgroup of the process killed, so a kill in a cgroup below that is
     * then removed (as an OCI runtime removes a container's) is known to this one only by the limit it hit.
     */
    long memoryLimitHits() throws IOException;

    /** Whether the OOM killer has killed any of its processes. */
    default boolean oomKilled() throws IOException {
        return oomKills() > 0;
    }

    /**
     * Removes it (every directory, on v1) with every cgroup below it, deepest first, once none holds a process,
     * retrying while the kernel is still tearing down the killed ones, for at most {@code timeout}. One that is gone
     * already is no error. Past what one walk takes in, it removes what a walk saw and walks again; what is left is
     * named in the error, and a directory that cannot be removed (on v1) does not keep the others.
     */
    void remove(Duration timeout) throws IOException, InterruptedException;
}
