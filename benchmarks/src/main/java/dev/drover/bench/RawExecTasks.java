package dev.drover.bench;

import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The host processes of a {@code --driver raw_exec} or {@code --driver oci} run (for oci: each task's monitor, the
 * runtime it runs and the container's processes): what they cost, and their end. The agent puts
 * the task cgroups below a parent of the run's own ({@link #cgroupParent()}, below the bench's cgroup); at the end
 * every process the agent started is ended and that parent removed, so a run leaves nothing behind.
 */
final class RawExecTasks {

    private static final Duration CGROUP_TIMEOUT = Duration.ofSeconds(10);

    private final String cgroupParent =
            "drover-bench-" + UUID.randomUUID().toString().substring(0, 8);
    /** Every process seen below an agent of this run: a handle ends only the process it was taken of. */
    private final Set<ProcessHandle> seen = new HashSet<>();

    /** The agent's {@code --cgroup-parent}: a fresh name relative to the bench's (and so the agent's) own cgroup. */
    String cgroupParent() {
        return cgroupParent;
    }

    /** The agent's flags for the run's driver: the driver enabled, its tasks' cgroups below the run's parent. */
    List<String> agentFlags(BenchOptions options) {
        List<String> flags = new ArrayList<>(List.of("--cgroup-parent", cgroupParent));
        if (options.rawExec()) {
            flags.add("--enable-raw-exec");
        }
        if (options.oci()) {
            flags.add("--enable-oci");
            if (options.registryCaFile() != null) {
                flags.addAll(
                        List.of("--registry-ca-file", options.registryCaFile().toString()));
            }
        }
        return flags;
    }

    /** The memory of every process below the agent (the tasks' processes, all of them) and how many there were. */
    record Memory(int processes, long pssBytes, long rssBytes) {}

    /**
     * The summed {@code Pss} ({@code /proc/PID/smaps_rollup}) and {@code VmRSS} ({@code /proc/PID/status}) of every
     * process below {@code agent}: each task's monitor, and for oci the runtime and the container's processes.
     */
    static Memory descendants(ProcessHandle agent) {
        int count = 0;
        long pss = 0;
        long rss = 0;
        for (ProcessHandle p : agent.descendants().toList()) {
            Optional<Long> one = pss(p.pid());
            long resident = RssPeak.rssBytes(p.pid());
            if (one.isPresent()) {
                count++;
                pss += one.get();
                rss += resident;
            }
        }
        return new Memory(count, pss, rss);
    }

    /** Remembers the processes below {@code agent}, to end any the agent leaves. */
    void record(ProcessHandle agent) {
        agent.descendants().forEach(seen::add);
    }

    /**
     * The summed proportional set size ({@code Pss} of {@code /proc/PID/smaps_rollup}) of the task supervisors below
     * {@code agent} (the drover-monitor, or the {@code /bin/sh} supervisor without it), divided by their count; 0
     * when there are none.
     */
    static long supervisorPssPerTask(ProcessHandle agent) {
        long total = 0;
        int count = 0;
        for (ProcessHandle p : agent.descendants().toList()) {
            if (isSupervisor(p.pid())) {
                Optional<Long> pss = pss(p.pid());
                if (pss.isPresent()) {
                    total += pss.get();
                    count++;
                }
            }
        }
        return count == 0 ? 0 : total / count;
    }

    /** Whether PID's command line is a task's supervisor: drover-monitor, or the shell named drover-supervisor. */
    static boolean isSupervisor(long pid) {
        List<String> argv = commandLine(pid);
        if (argv.isEmpty()) {
            return false;
        }
        return argv.getFirst().endsWith("/drover-monitor")
                || (argv.size() > 3 && argv.get(1).equals("-c") && argv.get(3).equals("drover-supervisor"));
    }

    /** The {@code Pss:} line of {@code /proc/PID/smaps_rollup}, in bytes; empty once the process is gone. */
    static Optional<Long> pss(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "smaps_rollup"))) {
                if (line.startsWith("Pss:")) {
                    String[] words = line.trim().split("\\s+");
                    return Optional.of(Long.parseLong(words[1]) * 1024); // the kernel writes kB
                }
            }
            return Optional.empty();
        } catch (IOException | NumberFormatException | ArrayIndexOutOfBoundsException e) {
            return Optional.empty();
        }
    }

    /** Waits up to {@code timeout} for every process recorded or below {@code agent} to end. */
    void awaitEnd(ProcessHandle agent, Duration timeout) throws InterruptedException {
        record(agent);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline
                && (seen.stream().anyMatch(ProcessHandle::isAlive)
                        || agent.descendants().findAny().isPresent())) {
            Thread.sleep(100);
        }
    }

    /**
     * Kills every recorded process still alive (by its handle, so a PID used again by another process is spared),
     * then removes the run's cgroup parent and the empty task cgroups in it. Returns how many it had to kill.
     */
    int endLeftovers() throws InterruptedException {
        List<ProcessHandle> alive = new ArrayList<>();
        for (ProcessHandle p : seen) {
            if (p.isAlive() && p.destroyForcibly()) {
                alive.add(p);
            }
        }
        for (ProcessHandle p : alive) {
            try {
                p.onExit().get(10, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // reported below with the cgroup that still holds it
            }
        }
        removeCgroups();
        return alive.size();
    }

    private void removeCgroups() throws InterruptedException {
        try {
            Cgroups.detect().removeWithIdleChildren(CgroupParent.own(), cgroupParent, CGROUP_TIMEOUT);
        } catch (IOException e) {
            System.err.println("bench: cgroup " + cgroupParent + " left behind: " + e.getMessage());
        }
    }

    private static List<String> commandLine(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            String text = new String(raw, StandardCharsets.UTF_8);
            return text.isEmpty() ? List.of() : List.of(text.split("\0"));
        } catch (IOException e) {
            return List.of(); // gone, or not ours to read
        }
    }
}
