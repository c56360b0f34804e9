package dev.drover.cgroups;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

/** A cgroup in the unified (v2) hierarchy: one directory. */
final class CgroupV2 implements Cgroup {

    private final String name;
    private final Path dir;
    private final ProcessControl control;
    private final Subtree subtree;
    private final Teardown teardown;

    CgroupV2(String name, Path dir, ProcessControl control, Subtree subtree) {
        this.name = name;
        this.dir = dir;
        this.control = control;
        this.subtree = subtree;
        this.teardown = new Teardown(name, subtree, control);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<Path> directories() {
        return List.of(dir);
    }

    @Override
    public void apply(CgroupLimits limits) throws IOException {
        if (limits.memoryBytes() > 0) {
            CgroupFiles.write(file("memory.max"), Long.toString(limits.memoryBytes()));
            if (CgroupFiles.exists(file("memory.swap.max"))) { // absent where swap is not accounted
                CgroupFiles.write(file("memory.swap.max"), "0");
            }
        }
        if (limits.cpuMillis() > 0) {
            long weight = CgroupLimits.cpuWeight(CgroupLimits.cpuShares(limits.cpuMillis()));
            CgroupFiles.write(file("cpu.weight"), Long.toString(weight));
            if (limits.cpuHardLimit()) {
                CgroupFiles.write(
                        file("cpu.max"),
                        CgroupLimits.cpuQuotaMicros(limits.cpuMillis()) + " " + CgroupLimits.CPU_PERIOD_MICROS);
            }
        }
        if (limits.pidsMax() > 0) {
            CgroupFiles.write(file("pids.max"), Long.toString(limits.pidsMax()));
        }
    }

    @Override
    public Cgroup createChild(String childName) throws IOException {
        Path child = dir.resolve(CgroupParent.requireName(childName));
        CgroupFiles.makeDirectory(child); // no controllers enabled for it: its use counts against this one's
        return new CgroupV2(childName, child, control, subtree);
    }

    @Override
    public void add(long pid) throws IOException {
        Teardown.requireMovable(pid);
        CgroupFiles.write(file("cgroup.procs"), Long.toString(pid));
    }

    @Override
    public List<Long> pids() throws IOException {
        return subtree.pids(List.of(dir));
    }

    @Override
    public void killAll(Duration timeout) throws IOException, InterruptedException {
        // Linux 5.14 on: the kernel ends every process below too, however many cgroups a task made, so it comes
        // before any walk, which sees at most a bounded number of them
        boolean killed = CgroupFiles.exists(file("cgroup.kill"));
        if (killed) {
            CgroupFiles.write(file("cgroup.kill"), "1");
        }
        teardown.killAll(this::left, this::killRound, timeout, killed);
    }

    /**
     * What is left in it and below: as far as a walk sees, and, where that is not the whole subtree, empty when
     * cgroup.events says no process is in it or below ({@code populated 0}).
     */
    private Subtree.Seen left() throws IOException {
        Subtree.Seen seen = subtree.seen(List.of(dir));
        if (seen.pids().isEmpty() && !seen.whole() && !populated()) {
            return Subtree.Seen.EMPTY;
        }
        return seen;
    }

    private boolean populated() throws IOException {
        Path events = file("cgroup.events");
        return !CgroupFiles.exists(events) || CgroupFiles.readTable(events).getOrDefault("populated", 1L) != 0;
    }

    private void killRound() throws IOException, InterruptedException {
        // cgroup.kill and cgroup.freeze act on the cgroups below too, seen by a walk or not
        if (CgroupFiles.exists(file("cgroup.kill"))) { // Linux 5.14 on: the kernel kills them all at once
            CgroupFiles.write(file("cgroup.kill"), "1");
            return;
        }
        boolean freezer = CgroupFiles.exists(file("cgroup.freeze"));
        if (freezer) {
            CgroupFiles.write(file("cgroup.freeze"), "1");
            Teardown.await(control, Teardown.FREEZE_WAIT, this::frozen);
        }
        try {
            teardown.signal(subtree.seen(List.of(dir)).pids());
        } finally {
            if (freezer) {
                CgroupFiles.write(file("cgroup.freeze"), "0"); // SIGKILL reaches frozen tasks; thaw lets them go
            }
        }
    }

    private boolean frozen() throws IOException {
        Path events = file("cgroup.events");
        return CgroupFiles.exists(events) && CgroupFiles.readTable(events).getOrDefault("frozen", 0L) == 1;
    }

    @Override
    public CgroupStats stats() throws IOException {
        long current = CgroupFiles.readLong(file("memory.current"));
        Path memoryStat = file("memory.stat");
        Map<String, Long> memory = CgroupFiles.readTable(memoryStat);
        Path cpuStat = file("cpu.stat");
        Map<String, Long> cpu = CgroupFiles.readTable(cpuStat);
        return new CgroupStats(
                current,
                CgroupFiles.entry(memoryStat, memory, "anon"),
                CgroupFiles.entry(memoryStat, memory, "file"),
                CgroupFiles.entry(memoryStat, memory, "inactive_file"),
                memoryLimit(),
                Duration.of(CgroupFiles.entry(cpuStat, cpu, "usage_usec"), ChronoUnit.MICROS),
                Duration.of(CgroupFiles.entry(cpuStat, cpu, "user_usec"), ChronoUnit.MICROS),
                Duration.of(CgroupFiles.entry(cpuStat, cpu, "system_usec"), ChronoUnit.MICROS));
    }

    /** memory.max, 0 for {@code max} or where the memory controller is not enabled for it (no file). */
    private long memoryLimit() throws IOException {
        Path max = file("memory.max");
        if (!CgroupFiles.exists(max)) {
            return 0;
        }
        return CgroupFiles.readLimit(max);
    }

    @Override
    public long oomKills() throws IOException {
        Path events = file("memory.events");
        return CgroupFiles.entry(events, CgroupFiles.readTable(events), "oom_kill");
    }

    @Override
    public long memoryLimitHits() throws IOException {
        Path events = file("memory.events");
        return CgroupFiles.entry(events, CgroupFiles.readTable(events), "max");
    }

    @Override
    public void remove(Duration timeout) throws IOException, InterruptedException {
        teardown.remove(List.of(dir), timeout);
    }

    @Override
    public String toString() {
        return "cgroup v2 " + dir;
    }

    private Path file(String fileName) {
        return dir.resolve(fileName);
    }
}
