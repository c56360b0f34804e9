package dev.drover.driver.exec;

import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.host.HostDriver;
import dev.drover.driver.host.HostProcessDriver;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.volumes.VolumeMounts;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code exec} driver: the {@link HostProcessDriver}'s supervisor, cgroup and reattach, as raw_exec has them,
 * with each task confined by {@link Namespaces} (its own PID, mount, IPC and UTS namespaces, its user, {@code nobody}
 * by default, its own {@code /tmp}, no other allocation's files and no GPU it was not given). Where the agent cannot
 * confine tasks so, the driver is still there, and every task asking for it fails validation saying what is missing.
 */
public final class ExecDriver extends HostDriver {

    public static final String NAME = "exec";

    private final Optional<String> missing;

    /**
     * @param dataDir      the agent's data dir, covered in each task's view but for the task's own allocation
     * @param reservations whether device plugins reserve GPUs here (else each task is given none)
     */
    public ExecDriver(
            InstantSource clock,
            LogRotator rotator,
            List<String> launcher,
            TaskCgroups cgroups,
            Path dataDir,
            boolean reservations) {
        this(clock, rotator, launcher, cgroups, dataDir, reservations, Optional.empty());
    }

    /** @param monitor {@link dev.drover.driver.host.TaskMonitor}'s binary, or empty to use the shell's */
    public ExecDriver(
            InstantSource clock,
            LogRotator rotator,
            List<String> launcher,
            TaskCgroups cgroups,
            Path dataDir,
            boolean reservations,
            Optional<Path> monitor) {
        this(
                clock,
                rotator,
                launcher,
                cgroups,
                new Namespaces(
                        dataDir,
                        Path.of("/etc/passwd"),
                        new GpuNodes(Path.of("/dev"), Path.of("/proc/driver/nvidia/gpus"), reservations)),
                ExecSupport.missing(!cgroups.version().equals("none")),
                monitor);
    }

    ExecDriver(
            InstantSource clock,
            LogRotator rotator,
            List<String> launcher,
            TaskCgroups cgroups,
            Namespaces namespaces,
            Optional<String> missing,
            Optional<Path> monitor) {
        super(new HostProcessDriver(NAME, clock, rotator, launcher, cgroups, namespaces, monitor));
        this.missing = missing;
    }

    /** What this agent lacks to run exec tasks, or empty when it can. */
    public Optional<String> missing() {
        return missing;
    }

    /**
     * raw_exec's keys and {@code volumeMounts}, whose destinations must be below {@code /local/} or {@code /alloc/}
     * ({@link VolumeMounts.Where#TASK_DIRECTORIES}).
     */
    @Override
    public List<String> validate(Map<String, Object> config) {
        if (missing.isPresent()) {
            return List.of("the exec driver cannot run tasks on this node: " + missing.get());
        }
        List<String> problems = new ArrayList<>(super.validate(withoutMounts(config)));
        VolumeMounts.read(config.get(VolumeMounts.KEY), VolumeMounts.Where.TASK_DIRECTORIES, problems);
        return problems;
    }

    @Override
    public TaskHandle start(TaskConfig task) throws DriverStartException {
        if (missing.isPresent()) {
            throw new DriverStartException("the exec driver cannot run tasks on this node: " + missing.get(), false);
        }
        List<String> problems = new ArrayList<>();
        VolumeMounts.read(task.config().get(VolumeMounts.KEY), VolumeMounts.Where.TASK_DIRECTORIES, problems);
        if (!problems.isEmpty()) {
            throw new DriverStartException(String.join("; ", problems), false);
        }
        return super.start(task.withConfig(withoutMounts(task.config())));
    }

    /** The config less {@code volumeMounts}, which the engine does not read: they come resolved as attachments. */
    private static Map<String, Object> withoutMounts(Map<String, Object> config) {
        if (!config.containsKey(VolumeMounts.KEY)) {
            return config;
        }
        Map<String, Object> rest = new HashMap<>(config);
        rest.remove(VolumeMounts.KEY);
        return rest;
    }
}
