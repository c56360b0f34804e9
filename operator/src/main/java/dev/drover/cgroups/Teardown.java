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
 * The parts of killing and removing a cgroup that v1 and v2 share, over the cgroup and the cgroups below it
 * ({@link Subtree}): the polling loops and the signals, and, for a task that made more cgroups below its own than
 * one walk takes in, the removal of the empty ones a walk saw, so that the next walk sees further. What is still
 * out of sight at the end is reported, never passed over.
 */
final class Teardown {

    /** How often a loop looks again. */
    static final Duration POLL = Duration.ofMillis(10);
    /** How long one kill round waits before it signals again what is left. */
    static final Duration ROUND = Duration.ofMillis(500);
    /** How long a freeze may take before processes are signalled anyway (one stuck in the kernel never freezes). */
    static final Duration FREEZE_WAIT = Duration.ofSeconds(1);

    private final String name;
    private final Subtree subtree;
    private final ProcessControl control;

    /** The teardown of cgroup {@code name}, walking with {@code subtree}, killing and waiting through {@code control}. */
    Teardown(String name, Subtree subtree, ProcessControl control) {
        this.name = name;
        this.subtree = subtree;
        this.control = control;
    }

    /** One round of signalling: cgroup.kill, or freeze, SIGKILL each, thaw. */
    interface Round {
        void run() throws IOException, InterruptedException;
    }

    /** What is left in the cgroup and below it, as far as walks see. */
    interface Probe {
        Subtree.Seen seen() throws IOException;
    }

    /** A condition polled until it holds. */
    interface Check {
        boolean holds() throws IOException;
    }

    /**
     * Runs rounds until the cgroup and the cgroups below it are empty, or fails naming what is left after
     * {@code timeout}. While a walk does not see the whole subtree, each round first removes the empty cgroups it
     * saw below the top (the kernel keeps any that holds a process or a cgroup), so the next walk sees further.
     *
     * @param signalled whether the caller has just signalled (written cgroup.kill), so the first round waits a round
     */
    void killAll(Probe probe, Round round, Duration timeout, boolean signalled)
            throws IOException, InterruptedException {
        long start = control.nanoTime();
        long nextRound = signalled ? start + ROUND.toNanos() : start;
        while (true) {
            Subtree.Seen left = probe.seen();
            if (left.empty()) {
                return;
            }
            long now = control.nanoTime();
            if (now - start >= timeout.toNanos()) {
                throw new IOException(left.whole() ? stillHolds(left, timeout) : outOfSight(left, timeout));
            }
            if (now - nextRound >= 0) {
                if (!left.whole()) {
                    for (Subtree.Walk walk : left.walks()) {
                        removeEach(walk.belowDeepestFirst());
                    }
                }
                round.run();
                nextRound = now + ROUND.toNanos();
            }
            control.pause(POLL);
        }
    }

    private String stillHolds(Subtree.Seen left, Duration timeout) {
        return "cgroup " + name + " still holds processes " + pidList(left.pids()) + " after "
                + Durations.format(timeout) + " of killing";
    }

    private String outOfSight(Subtree.Seen left, Duration timeout) {
        return "cgroup " + name + " has more cgroups below it than the " + subtree.limit() + " one walk takes in:"
                + " after " + Durations.format(timeout) + " of killing what walks saw and removing the empty cgroups"
                + " among them, some are still out of sight"
                + (left.pids().isEmpty() ? "" : ", and processes " + pidList(left.pids()) + " are left")
                + "; processes may still run in them: end them and remove the cgroups its task made (rmdir, deepest"
                + " first)";
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
    void signal(Collection<Long> pids) throws IOException {
        long self = ProcessHandle.current().pid();
        if (pids.contains(self)) {
            throw new IOException(
                    "this agent's own process " + self + " is in cgroup " + name + "; refusing to kill it");
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
     * rmdir of each of {@code tops} and of every cgroup below it, deepest first, once none of them holds a process;
     * retried, walking the subtree again, while the kernel says one is busy, for at most {@code timeout} in all.
     * Past what one walk takes in, what a walk saw is removed and the subtree walked again while that removes any.
     * A top that cannot be removed does not keep the others: they are removed, and the error names the first.
     */
    void remove(List<Path> tops, Duration timeout) throws IOException, InterruptedException {
        long start = control.nanoTime();
        IOException failed = null;
        for (Path top : tops) {
            try {
                remove(top, start, timeout);
            } catch (IOException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    private void remove(Path top, long start, Duration timeout) throws IOException, InterruptedException {
        if (!Files.exists(top, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        CgroupFiles.requireDirectory(top);
        while (true) {
            Subtree.Seen seen = subtree.seen(List.of(top));
            if (!seen.pids().isEmpty()) {
                throw new IOException("cannot remove cgroup " + name + ": " + top + " (or a cgroup in it) still"
                        + " holds processes " + pidList(seen.pids()) + "; kill them first");
            }
            Subtree.Walk walk = seen.walks().getFirst();
            Removal removal = removeEach(walk.cgroups().reversed()); // rmdir(2); cgroupfs lets it go with its files
            if (removal.kept() == null) {
                if (walk.whole()) {
                    return;
                }
                continue;
            }
            boolean progress = !walk.whole() && removal.removed() > 0;
            if (control.nanoTime() - start >= timeout.toNanos()) {
                throw new IOException(notRemoved(removal.kept(), walk.whole(), timeout), removal.kept());
            }
            if (!progress) {
                control.pause(POLL);
            }
        }
    }

    private String notRemoved(FileSystemException kept, boolean whole, Duration timeout) {
        if (whole) {
            return "cannot remove cgroup " + name + " at " + kept.getFile() + " within " + Durations.format(timeout)
                    + ": " + CgroupFiles.reason(kept);
        }
        return "cannot remove cgroup " + name + " within " + Durations.format(timeout) + ": it has more cgroups below"
                + " it than the " + subtree.limit() + " one walk takes in, and " + kept.getFile() + " ("
                + CgroupFiles.reason(kept) + ") is left with cgroups below it out of sight; end what runs there and"
                + " remove them (rmdir, deepest first)";
    }

    /**
     * What a pass of rmdir did.
     *
     * @param removed how many went
     * @param kept the first the kernel kept (busy, or holding a cgroup), or null when none
     */
    private record Removal(int removed, FileSystemException kept) {}

    /** rmdir of each of {@code dirs} in turn, passing over those the kernel keeps. */
    private static Removal removeEach(List<Path> dirs) throws IOException {
        int removed = 0;
        FileSystemException kept = null;
        for (Path dir : dirs) {
            try {
                if (Files.deleteIfExists(dir)) {
                    removed++;
                }
            } catch (FileSystemException e) {
                if (kept == null) {
                    kept = e;
                }
            }
        }
        return new Removal(removed, kept);
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
