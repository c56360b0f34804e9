package dev.drover.cgroups;

import dev.drover.common.Durations;
import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The parts of killing and removing a cgroup that v1 and v2 share: the polling loops and the signals, over the
 * cgroup and every cgroup below it ({@link Subtree}).
 */
final class Teardown {

    /** How often a loop looks again. */
    static final Duration POLL = Duration.ofMillis(10);
    /** How long one kill round waits before it signals again what is left. */
    static final Duration ROUND = Duration.ofMillis(500);
    /** How long a freeze may take before processes are signalled anyway (one stuck in the kernel never freezes). */
    static final Duration FREEZE_WAIT = Duration.ofSeconds(1);

    private Teardown() {}

    /** One round of signalling: cgroup.kill, or freeze, SIGKILL each, thaw. */
    interface Round {
        void run() throws IOException, InterruptedException;
    }

    /** A condition polled until it holds. */
    interface Check {
        boolean holds() throws IOException;
    }

    /** Runs rounds until {@code cgroup} is empty, or fails naming what is left after {@code timeout}. */
    static void killAll(Cgroup cgroup, Round round, ProcessControl control, Duration timeout)
            throws IOException, InterruptedException {
        long start = control.nanoTime();
        long nextRound = start;
        while (true) {
            List<Long> left = cgroup.pids();
            if (left.isEmpty()) {
                return;
            }
            long now = control.nanoTime();
            if (now - start >= timeout.toNanos()) {
                throw new IOException("cgroup " + cgroup.name() + " still holds processes " + pidList(left) + " after "
                        + Durations.format(timeout) + " of killing");
            }
            if (now - nextRound >= 0) {
                round.run();
                nextRound = now + ROUND.toNanos();
            }
            control.pause(POLL);
        }
    }

    /** Polls {@code check} for at most {@code max}; whether it came to hold. */
    static boolean await(ProcessControl control, Duration max, Check check) throws IOException, InterruptedException {
        long start = control.nanoTime();
        while (!check.holds()) {
            if (control.nanoTime() - start >= max.toNanos()) {
                return false;
            }
            control.pause(POLL);
        }
        return true;
    }

    /** SIGKILL to each of {@code pids}; never to this process, which must not be in a task's cgroup at all. */
    static void signal(ProcessControl control, Collection<Long> pids, String cgroup) throws IOException {
        long self = ProcessHandle.current().pid();
        if (pids.contains(self)) {
            throw new IOException(
                    "this agent's own process " + self + " is in cgroup " + cgroup + "; refusing to kill it");
        }
        for (long pid : pids) {
            control.kill(pid);
        }
    }

    /** Fails for a PID that is not a process to move: 0 or less (the writer itself), or this process. */
    static void requireMovable(long pid) {
        if (pid <= 0) {
            throw new IllegalArgumentException("no process " + pid);
        }
        if (pid == ProcessHandle.current().pid()) {
            throw new IllegalArgumentException("the agent's own process " + pid + " is never put in a task's cgroup");
        }
    }

    /**
     * rmdir of each of {@code dirs} and of every cgroup below it, deepest first, once none of them holds a process;
     * retried, walking the subtree again, while the kernel says one is busy, for at most {@code timeout} in all.
     */
    static void remove(String name, List<Path> dirs, ProcessControl control, Duration timeout)
            throws IOException, InterruptedException {
        long start = control.nanoTime();
        for (Path top : dirs) {
            if (!Files.exists(top, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            CgroupFiles.requireDirectory(top);
            while (true) {
                List<Long> left = Subtree.pids(List.of(top));
                if (!left.isEmpty()) {
                    throw new IOException("cannot remove cgroup " + name + ": " + top + " (or a cgroup in it) still"
                            + " holds processes " + pidList(left) + "; kill them first");
                }
                try {
                    for (Path dir : Subtree.of(top).reversed()) {
                        Files.deleteIfExists(dir); // rmdir(2); cgroupfs lets it go with its control files
                    }
                    break;
                } catch (FileSystemException e) {
                    if (control.nanoTime() - start >= timeout.toNanos()) {
                        throw new IOException(
                                "cannot remove cgroup " + name + " at " + e.getFile() + " within "
                                        + Durations.format(timeout) + ": " + CgroupFiles.reason(e),
                                e);
                    }
                    control.pause(POLL);
                }
            }
        }
    }

    /** PIDs as a message lists them, at most a few. */
    static String pidList(List<Long> pids) {
        List<String> names = new ArrayList<>();
        for (long pid : pids) {
            names.add(Long.toString(pid));
        }
        return UserText.join(names, ", ");
    }
}
