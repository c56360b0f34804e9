package dev.drover.cgroups;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A cgroup on v1: a directory of the same name in each controller's hierarchy. */
final class CgroupV1 implements Cgroup {

    /** USER_HZ, the unit of cpuacct.stat: 100 on every Linux architecture Drover runs on. */
    static final long USER_HZ = 100;

    /** From here on memory.limit_in_bytes means no limit (unset, it holds 2^63 less a page). */
    static final long UNLIMITED = 1L << 62;

    private final String name;
    /** Each hierarchy it has a directory in, with that directory, in the layout's order. */
    private final Map<Hierarchy, Path> dirs;

    private final ProcessControl control;
    private final Subtree subtree;
    private final Teardown teardown;

    CgroupV1(String name, Map<Hierarchy, Path> dirs, ProcessControl control, Subtree subtree) {
        this.name = name;
        this.dirs = Collections.unmodifiableMap(new LinkedHashMap<>(dirs));
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
        return dirs.values().stream().sorted().toList();
    }

    @Override
    public void apply(CgroupLimits limits) throws IOException {
        if (limits.memoryBytes() > 0) {
            limitMemory(dir("memory", "limit memory"), limits.memoryBytes());
        }
        if (limits.cpuMillis() > 0) {
            Path cpu = dir("cpu", "set a CPU share");
            CgroupFiles.write(cpu.resolve("cpu.shares"), Long.toString(CgroupLimits.cpuShares(limits.cpuMillis())));
            if (limits.cpuHardLimit()) {
                CgroupFiles.write(cpu.resolve("cpu.cfs_period_us"), Long.toString(CgroupLimits.CPU_PERIOD_MICROS));
                CgroupFiles.write(
                        cpu.resolve("cpu.cfs_quota_us"),
                        Long.toString(CgroupLimits.cpuQuotaMicros(limits.cpuMillis())));
            }
        }
        if (limits.pidsMax() > 0) {
            CgroupFiles.write(dir("pids", "limit processes").resolve("pids.max"), Long.toString(limits.pidsMax()));
        }
    }

    /**
     * memory.limit_in_bytes, and memory.memsw.limit_in_bytes (memory plus swap) to the same value, so no swap,
     * where swap is accounted. The kernel keeps memsw at least the memory limit, so a raise writes memsw first.
     * Their high-water marks start again, so that reaching the limit is this run's ({@link #memoryLimitHits()}).
     */
    private static void limitMemory(Path memory, long bytes) throws IOException {
        Path limit = memory.resolve("memory.limit_in_bytes");
        Path memsw = memory.resolve("memory.memsw.limit_in_bytes");
        String value = Long.toString(bytes);
        if (!CgroupFiles.exists(memsw)) {
            CgroupFiles.write(limit, value);
        } else if (bytes > CgroupFiles.readLong(memsw)) {
            CgroupFiles.write(memsw, value);
            CgroupFiles.write(limit, value);
        } else {
            CgroupFiles.write(limit, value);
            CgroupFiles.write(memsw, value);
        }
        for (String mark : List.of("memory.max_usage_in_bytes", "memory.memsw.max_usage_in_bytes")) {
            if (CgroupFiles.exists(memory.resolve(mark))) {
                CgroupFiles.write(memory.resolve(mark), "0");
            }
        }
    }

    @Override
    public Cgroup createChild(String childName) throws IOException {
        CgroupParent.requireName(childName);
        Map<Hierarchy, Path> children = new LinkedHashMap<>();
        for (Map.Entry<Hierarchy, Path> e : dirs.entrySet()) {
            children.put(e.getKey(), e.getValue().resolve(childName));
        }
        CgroupFiles.makeDirectories(children.values()); // in every hierarchy or none
        return new CgroupV1(childName, children, control, subtree);
    }

    @Override
    public void add(long pid) throws IOException {
        Teardown.requireMovable(pid);
        for (Path dir : directories()) {
            CgroupFiles.write(dir.resolve("cgroup.procs"), Long.toString(pid));
        }
    }

    @Override
    public List<Long> pids() throws IOException {
        return subtree.pids(directories());
    }

    @Override
    public void killAll(Duration timeout) throws IOException, InterruptedException {
        teardown.killAll(() -> subtree.seen(directories()), this::killRound, timeout, false);
    }

    private void killRound() throws IOException, InterruptedException {
        Optional<Path> freezer = find("freezer");
        if (freezer.isPresent()) {
            Path state = freezer.get().resolve("freezer.state");
            CgroupFiles.write(state, "FROZEN");
            Teardown.await(
                    control,
                    Teardown.FREEZE_WAIT,
                    () -> CgroupFiles.readWord(state).equals("FROZEN"));
            try {
                teardown.signal(subtree.seen(directories()).pids()); // the freeze holds the cgroups below too
            } finally {
                thaw(freezer.get());
            }
        } else {
            // no freezer: rounds repeat until forks stop outrunning us
            teardown.signal(subtree.seen(directories()).pids());
        }
    }

    /**
     * Thaws it, and then each cgroup below it, where a task may have frozen a cgroup of its own: a frozen task dies
     * of SIGKILL only once thawed. One out of sight of the walk is thawed once the kill has removed enough of the
     * empty cgroups before it to see it.
     */
    private void thaw(Path freezer) throws IOException {
        CgroupFiles.write(freezer.resolve("freezer.state"), "THAWED");
        for (Path below : subtree.walk(freezer).cgroups().stream().skip(1).toList()) {
            try {
                CgroupFiles.write(below.resolve("freezer.state"), "THAWED");
            } catch (NoSuchFileException gone) {
                // removed since it was listed
            }
        }
    }

    @Override
    public CgroupStats stats() throws IOException {
        Path memory = dir("memory", "read memory usage");
        Path memoryStat = memory.resolve("memory.stat");
        Map<String, Long> stat = CgroupFiles.readTable(memoryStat);
        Path cpuacct = dir("cpuacct", "read CPU usage");
        Path cpuStat = cpuacct.resolve("cpuacct.stat");
        Map<String, Long> cpu = CgroupFiles.readTable(cpuStat);
        return new CgroupStats(
                CgroupFiles.readLong(memory.resolve("memory.usage_in_bytes")),
                CgroupFiles.entry(memoryStat, stat, "rss"),
                CgroupFiles.entry(memoryStat, stat, "cache"),
                CgroupFiles.entry(memoryStat, stat, "total_inactive_file"),
                memoryLimit(memory),
                Duration.ofNanos(CgroupFiles.readLong(cpuacct.resolve("cpuacct.usage"))),
                ticks(CgroupFiles.entry(cpuStat, cpu, "user")),
                ticks(CgroupFiles.entry(cpuStat, cpu, "system")));
    }

    /**
     * memory.limit_in_bytes; 0 for none, which v1 tells by the largest value its page counter holds (2^63 less a
     * page): anything from 2^62 on is no limit of this world.
     */
    private static long memoryLimit(Path memory) throws IOException {
        Path limit = memory.resolve("memory.limit_in_bytes");
        if (!CgroupFiles.exists(limit)) {
            return 0;
        }
        long bytes = CgroupFiles.readLong(limit);
        return bytes >= UNLIMITED ? 0 : bytes;
    }

    private static Duration ticks(long ticks) {
        return Duration.ofSeconds(ticks / USER_HZ, (ticks % USER_HZ) * (1_000_000_000 / USER_HZ));
    }

    @Override
    public long oomKills() throws IOException {
        Path memory = dir("memory", "tell an OOM kill");
        Path oomControl = memory.resolve("memory.oom_control");
        Long kills = CgroupFiles.readTable(oomControl).get("oom_kill"); // Linux 4.13 on
        if (kills != null) {
            return kills;
        }
        return CgroupFiles.readLong(memory.resolve("memory.failcnt")) > 0 ? 1 : 0;
    }

    @Override
    public long memoryLimitHits() throws IOException {
        Path memory = dir("memory", "tell an OOM kill");
        long hits = CgroupFiles.readLong(memory.resolve("memory.failcnt"));
        // where swap is accounted the memory-plus-swap limit, set to the same, is reached first, and recent kernels
        // count failures of neither then: its high-water mark at the limit says it was reached
        if (CgroupFiles.exists(memory.resolve("memory.memsw.max_usage_in_bytes"))
                && CgroupFiles.readLong(memory.resolve("memory.memsw.max_usage_in_bytes"))
                        >= CgroupFiles.readLong(memory.resolve("memory.memsw.limit_in_bytes"))) {
            hits++;
        }
        return hits;
    }

    @Override
    public void remove(Duration timeout) throws IOException, InterruptedException {
        teardown.remove(directories(), timeout);
    }

    @Override
    public String toString() {
        return "cgroup v1 " + name + " " + directories();
    }

    private Optional<Path> find(String controller) {
        return dirs.entrySet().stream()
                .filter(e -> e.getKey().has(controller))
                .map(Map.Entry::getValue)
                .findFirst();
    }

    private Path dir(String controller, String purpose) throws IOException {
        return find(controller)
                .orElseThrow(() -> new IOException("cannot " + purpose + " of cgroup " + name + ": no " + controller
                        + " hierarchy is mounted (cgroup v1)"));
    }
}
