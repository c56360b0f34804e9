package dev.drover.driver.exec;

import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskStats;
import dev.drover.driver.rawexec.LogRotator;
import dev.drover.driver.rawexec.RawExecDriver;
import dev.drover.driver.rawexec.TaskCgroups;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The {@code exec} driver: raw_exec's supervisor, cgroup and reattach, with each task confined by
 * {@link Namespaces} (its own PID, mount, IPC and UTS namespaces, its user, {@code nobody} by default, its own
 * {@code /tmp}, no other allocation's files and no GPU it was not given). Where the agent cannot confine tasks so,
 * the driver is still there, and every task asking for it fails validation saying what is missing.
 */
public final class ExecDriver implements Driver {

    public static final String NAME = "exec";

    private final RawExecDriver tasks;
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

    /** @param monitor {@link dev.drover.driver.rawexec.TaskMonitor}'s binary, or empty to use the shell's */
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
        this.tasks = new RawExecDriver(NAME, clock, rotator, launcher, cgroups, namespaces, monitor);
        this.missing = missing;
    }

    /** What this agent lacks to run exec tasks, or empty when it can. */
    public Optional<String> missing() {
        return missing;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<String> validate(Map<String, Object> config) {
        if (missing.isPresent()) {
            return List.of("the exec driver cannot run tasks on this node: " + missing.get());
        }
        return tasks.validate(config);
    }

    @Override
    public TaskHandle start(TaskConfig task) throws DriverStartException {
        if (missing.isPresent()) {
            throw new DriverStartException("the exec driver cannot run tasks on this node: " + missing.get(), false);
        }
        return tasks.start(task);
    }

    @Override
    public CompletableFuture<ExitResult> exit(TaskHandle handle) {
        return tasks.exit(handle);
    }

    @Override
    public void stop(TaskHandle handle, Duration timeout, String signal) throws DriverException {
        tasks.stop(handle, timeout, signal);
    }

    @Override
    public void signal(TaskHandle handle, String signal) throws DriverException {
        tasks.signal(handle, signal);
    }

    @Override
    public ExecProcess exec(TaskHandle handle, ExecRequest request) throws DriverException {
        return tasks.exec(handle, request);
    }

    @Override
    public void destroy(TaskHandle handle) {
        tasks.destroy(handle);
    }

    @Override
    public TaskHandle recover(TaskHandle handle) throws DriverException {
        return tasks.recover(handle);
    }

    @Override
    public Optional<TaskHandle> findUnrecorded(TaskConfig task) throws DriverException {
        return tasks.findUnrecorded(task);
    }

    @Override
    public TaskStats stats(TaskHandle handle) throws DriverException {
        return tasks.stats(handle);
    }

    @Override
    public void close() {
        tasks.close();
    }
}
