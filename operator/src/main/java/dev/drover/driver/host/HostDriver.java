package dev.drover.driver.host;

import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskStats;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A driver whose tasks are host processes, run by the {@link HostProcessDriver} it was made with: the concrete driver
 * (raw_exec, exec) gives that engine its name and its {@link Confinement}, and may guard which tasks it takes by
 * overriding {@link #validate} and {@link #start}; everything else is the engine's, the same for each.
 */
public abstract class HostDriver implements Driver {

    private final HostProcessDriver tasks;

    protected HostDriver(HostProcessDriver tasks) {
        this.tasks = tasks;
    }

    @Override
    public final String name() {
        return tasks.name();
    }

    @Override
    public List<String> validate(Map<String, Object> config) {
        return tasks.validate(config);
    }

    @Override
    public TaskHandle start(TaskConfig task) throws DriverStartException {
        return tasks.start(task);
    }

    @Override
    public final CompletableFuture<ExitResult> exit(TaskHandle handle) {
        return tasks.exit(handle);
    }

    @Override
    public final void stop(TaskHandle handle, Duration timeout, String signal) throws DriverException {
        tasks.stop(handle, timeout, signal);
    }

    @Override
    public final void signal(TaskHandle handle, String signal) throws DriverException {
        tasks.signal(handle, signal);
    }

    @Override
    public final ExecProcess exec(TaskHandle handle, ExecRequest request) throws DriverException {
        return tasks.exec(handle, request);
    }

    @Override
    public final void destroy(TaskHandle handle) {
        tasks.destroy(handle);
    }

    @Override
    public final TaskHandle recover(TaskHandle handle) throws DriverException {
        return tasks.recover(handle);
    }

    @Override
    public final Optional<TaskHandle> findUnrecorded(TaskConfig task) throws DriverException {
        return tasks.findUnrecorded(task);
    }

    @Override
    public final TaskStats stats(TaskHandle handle) throws DriverException {
        return tasks.stats(handle);
    }

    @Override
    public final void close() {
        tasks.close();
    }
}
