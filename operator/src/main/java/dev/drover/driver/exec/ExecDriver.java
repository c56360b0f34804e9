package dev.drover.driver.exec;

import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.host.HostDriver;
import dev.drover.driver.host.HostProcessDriver;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import java.nio.file.Path;
import java.time.InstantSource;
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

    @Override
    public List<String> validate(Map<String, Object> config) {
        if (missing.isPresent()) {
            return List.of("the exec driver cannot run tasks on this node: " + missing.get());
        }
        return super.validate(config);
    }

    @Override
    public TaskHandle start(TaskConfig task) throws DriverStartException {
        if (missing.isPresent()) {
            throw new DriverStartException("the exec driver cannot run tasks on this node: " + missing.get(), false);
        }
        return super.start(task);
    }
}
