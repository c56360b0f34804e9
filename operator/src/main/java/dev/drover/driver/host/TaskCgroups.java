package dev.drover.driver.host;

import dev.drover.cgroups.Cgroup;
import dev.drover.cgroups.CgroupLimits;
import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.CgroupStats;
import dev.drover.cgroups.CgroupVersion;
import dev.drover.cgroups.Cgroups;
import dev.drover.common.UserText;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskResources;
import dev.drover.driver.TaskStats;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cgroup of each host-process task (issue 20), under the agent's {@code cgroupParent}: made before the task starts
 * (the task's own process joins it before it execs, its supervisor stays out), held to the task's limits, emptied
 * with kill-all on stop and destroy so nothing escapes by leaving the task's session, asked whether the OOM killer
 * struck, and removed once the task is dead. Without cgroups (not root, nothing writable) tasks run unconfined, as
 * {@link #none} says once at start.
 *
 * <p>A task's cgroup is named from its namespace, allocation and task ({@code ns_alloc_task}: {@code _} is in none
 * of those names, so two tasks never share one), cut and suffixed with a hash when that would be too long; the name
 * and the OOM count at start are kept in the task's handle, so an agent after a restart finds it again.
 */
public final class TaskCgroups {

    private static final Logger LOG = LoggerFactory.getLogger(TaskCgroups.class);
    /** How long kill-all and removal may take. */
    static final Duration TEARDOWN = Duration.ofSeconds(10);

    /** The Node annotation that tells which cgroups raw_exec tasks run in: v1, v2 or none. */
    public static final String ANNOTATION = "drover.dev/cgroup-version";

    static final String NAME_KEY = "cgroup";
    static final String OOM_KEY = "cgroupOomKills";
    static final String LIMIT_HITS_KEY = "cgroupMemoryLimitHits";

    private final Cgroups cgroups;
    private final CgroupParent parent;
    private final long pidsMax;

    private TaskCgroups(Cgroups cgroups, CgroupParent parent, long pidsMax) {
        this.cgroups = cgroups;
        this.parent = parent;
        this.pidsMax = pidsMax;
    }

    /** Tasks run unconfined: no cgroup is made, limits are not applied, stop ends the process group only. */
    public static TaskCgroups none() {
        return new TaskCgroups(null, null, 0);
    }

    /**
     * Task cgroups under {@code parent} of {@code cgroups}, checked by making the parent now; an error when it
     * cannot be made (not root, a read-only tree, a v2 parent that cannot hand controllers down).
     *
     * @param pidsMax each task's pids.max; 0 for no limit
     */
    public static TaskCgroups open(Cgroups cgroups, CgroupParent parent, long pidsMax) throws IOException {
        if (parent.segments().isEmpty()) {
            throw new IOException("the cgroup parent must name a cgroup of Drover's own, not " + parent);
        }
        List<String> up = parent.segments().subList(0, parent.segments().size() - 1);
        cgroups.create(
                new CgroupParent(parent.belowOwn(), up), parent.segments().getLast());
        return new TaskCgroups(cgroups, parent, pidsMax);
    }

    /**
     * The node's cgroups under {@code parent} (as {@link CgroupParent#parse} reads it), logged; {@link #none} with a
     * warning when they cannot be used.
     */
    public static TaskCgroups detect(String parent, long pidsMax) {
        try {
            Cgroups found = Cgroups.detect();
            TaskCgroups opened = open(found, CgroupParent.parse(parent), pidsMax);
            LOG.info(
                    "raw_exec tasks run in cgroups under {} ({}{})",
                    parent,
                    found.description(),
                    pidsMax > 0 ? ", pids.max " + pidsMax : "");
            return opened;
        } catch (IOException | RuntimeException e) {
            LOG.warn(
                    "raw_exec tasks are not confined: no cgroup can be made under {} ({}); they run without limits,"
                            + " and a process that leaves its task's session outlives a stop",
                    parent,
                    e.getMessage());
            return none();
        }
    }

    /**
     * At the agent's stop: removes the parent when no task cgroup is left in it (nothing runs), so an agent leaves
     * no cgroup behind; it is made again at the next start. A parent that still holds a task (tasks outlive the
     * agent) stays, and so does one that cannot be removed: nothing to report.
     */
    void removeParentIfUnused() {
        if (cgroups == null) {
            return;
        }
        List<String> up = parent.segments().subList(0, parent.segments().size() - 1);
        try {
            Optional<Cgroup> own = cgroups.find(
                    new CgroupParent(parent.belowOwn(), up), parent.segments().getLast());
            if (own.isEmpty()
                    || !own.get().pids().isEmpty()
                    || !own.get().childNames().isEmpty()) {
                return;
            }
            own.get().remove(Duration.ofSeconds(1));
        } catch (IOException e) {
            LOG.debug("cgroup parent {} stays: {}", parent, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** "v1", "v2", or "none" when tasks run unconfined: for the metric and the Node annotation. */
    public String version() {
        return cgroups == null ? "none" : cgroups.layout().version() == CgroupVersion.V2 ? "v2" : "v1";
    }

    /** The cgroup name of {@code task}: {@code namespace_alloc_task}, or a cut of it with a hash when too long. */
    static String nameOf(TaskConfig task) {
        String full = task.namespace() + "_" + task.allocName() + "_" + task.taskName();
        if (full.length() <= CgroupParent.NAME_LIMIT) {
            return CgroupParent.requireName(full);
        }
        String hash;
        try {
            hash = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(full.getBytes(StandardCharsets.UTF_8)))
                    .substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
        return CgroupParent.requireName(full.substring(0, CgroupParent.NAME_LIMIT - 17) + "_" + hash);
    }

    /** A new task's cgroup with its limits applied; empty when tasks run unconfined. */
    Optional<Cgroup> create(TaskConfig task) throws DriverStartException {
        if (cgroups == null) {
            return Optional.empty();
        }
        CgroupLimits limits;
        try {
            limits = limits(task.resources());
        } catch (IllegalArgumentException e) {
            throw new DriverStartException("resources: " + e.getMessage(), false);
        }
        String name = nameOf(task);
        try {
            Cgroup cgroup = cgroups.create(parent, name);
            cgroup.apply(limits);
            return Optional.of(cgroup);
        } catch (IOException e) {
            throw new DriverStartException(
                    "cannot make the task's cgroup " + parent + "/" + name + ": " + e.getMessage(), true, e);
        }
    }

    private CgroupLimits limits(TaskResources r) {
        long memory = Math.multiplyExact(r.memoryMB(), 1L << 20);
        return new CgroupLimits(memory, r.cpuMillis(), r.cpuHardLimit() && r.cpuMillis() > 0, pidsMax);
    }

    /** What a handle keeps of the task's cgroup: its name, and its OOM and memory limit counts at start. */
    static Map<String, String> state(Optional<Cgroup> cgroup) throws IOException {
        if (cgroup.isEmpty()) {
            return Map.of();
        }
        return Map.of(
                NAME_KEY,
                cgroup.get().name(),
                OOM_KEY,
                Long.toString(cgroup.get().oomKills()),
                LIMIT_HITS_KEY,
                Long.toString(cgroup.get().memoryLimitHits()));
    }

    /** The files the task's process writes its PID to, to join the cgroup before it execs. */
    static List<String> procsFiles(Optional<Cgroup> cgroup) {
        return cgroup.map(c -> c.directories().stream()
                        .map(d -> d.resolve("cgroup.procs").toString())
                        .toList())
                .orElse(List.of());
    }

    /**
     * A cgroup of its own inside the task's for one command run in the task ({@link TaskExec}), named
     * {@code drover-exec-} and 16 random hex digits: closing the command ends what it started and nothing else,
     * even a process that left its session, and one it forks meanwhile cannot escape. Its use counts against the
     * task's limits. Empty when the task has no cgroup.
     */
    static Optional<Cgroup> forCommand(Optional<Cgroup> task) throws IOException {
        if (task.isEmpty()) {
            return Optional.empty();
        }
        String name = "drover-exec-"
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        try {
            return Optional.of(task.get().createChild(name));
        } catch (IOException e) {
            throw new IOException(
                    "cannot make the command's cgroup in the task's ("
                            + task.get().name() + "; has the task just ended?): " + e.getMessage(),
                    e);
        }
    }

    /** The handle's cgroup, found again (nothing is made or moved); empty when it has none or it is gone. */
    Optional<Cgroup> find(TaskHandle handle) throws IOException {
        String name = handle.state().get(NAME_KEY);
        if (cgroups == null || name == null) {
            return Optional.empty();
        }
        return cgroups.find(parent, name);
    }

    /**
     * {@code result}, told as an OOM kill when the task's cgroup counted one more since the task started, or when
     * the task ended by SIGKILL (directly, or as 137 from a runtime that ran it) after its memory reached the limit:
     * what the OOM killer does, counted on a v1 kernel only in a cgroup below that its runtime has since removed.
     */
    ExitResult withOom(TaskHandle handle, ExitResult result) {
        try {
            Optional<Cgroup> cgroup = find(handle);
            if (cgroup.isEmpty()) {
                return result;
            }
            if (cgroup.get().oomKills() > handle.longState(OOM_KEY, 0)) {
                return result.withOomKilled();
            }
            boolean sigkill = "SIGKILL".equals(result.signal()) || result.signal() == null && result.exitCode() == 137;
            if (sigkill
                    && handle.state().containsKey(LIMIT_HITS_KEY)
                    && cgroup.get().memoryLimitHits() > handle.longState(LIMIT_HITS_KEY, 0)) {
                return result.withOomKilled();
            }
        } catch (IOException | NumberFormatException e) {
            LOG.warn("task {}: cannot read its cgroup's OOM count: {}", handle.taskId(), e.getMessage());
        }
        return result;
    }

    /** Ends every process in the task's cgroup with SIGKILL; nothing when it has none. */
    void killAll(TaskHandle handle) throws DriverException {
        try {
            Optional<Cgroup> cgroup = find(handle);
            if (cgroup.isPresent()) {
                cgroup.get().killAll(TEARDOWN);
            }
        } catch (IOException e) {
            throw new DriverException(
                    "task " + handle.taskId() + ": cannot end the processes in its cgroup: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DriverException("interrupted while ending task " + handle.taskId() + "'s cgroup", e);
        }
    }

    /** After the task's end: kills what is left in its cgroup and removes it; failures are logged. */
    void release(TaskHandle handle) {
        try {
            Optional<Cgroup> cgroup = find(handle);
            if (cgroup.isPresent()) {
                cgroup.get().killAll(TEARDOWN);
                cgroup.get().remove(TEARDOWN);
            }
        } catch (IOException e) {
            LOG.warn("task {}: cannot remove its cgroup: {}", handle.taskId(), UserText.cut(e.getMessage(), 500));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The task's usage as its cgroup counts it (every process in it); empty when it has none. */
    Optional<TaskStats> stats(TaskHandle handle, Instant now) throws DriverException {
        try {
            Optional<Cgroup> cgroup = find(handle);
            if (cgroup.isEmpty()) {
                return Optional.empty();
            }
            CgroupStats s = cgroup.get().stats();
            return Optional.of(new TaskStats(now, s.cpu(), s.memoryBytes(), s.workingSetBytes(), s.memoryLimitBytes()));
        } catch (IOException e) {
            throw new DriverException("task " + handle.taskId() + ": cannot read its cgroup: " + e.getMessage(), e);
        }
    }
}
