package dev.drover.testing;

import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
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
 * A driver that hands every call to another, for tests to override the calls they make misbehave (a driver
 * with a bug). Closing it leaves the other open: the test owns that one.
 */
public class ForwardingDriver implements Driver {

    protected final Driver delegate;

    public ForwardingDriver(Driver delegate) {
        this.delegate = delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public List<String> validate(Map<String, Object> config) {
        return delegate.validate(config);
    }

    @Override
    public TaskHandle start(TaskConfig task) throws DriverStartException {
        return delegate.start(task);
    }

    @Override
    public CompletableFuture<ExitResult> exit(TaskHandle handle) {
        return delegate.exit(handle);
    }

    @Override
    public void stop(TaskHandle handle, Duration timeout, String signal) throws DriverException {
        delegate.stop(handle, timeout, signal);
    }

    @Override
    public void signal(TaskHandle handle, String signal) throws DriverException {
        delegate.signal(handle, signal);
    }

    @Override
    public void destroy(TaskHandle handle) {
        delegate.destroy(handle);
    }

    @Override
    public TaskHandle recover(TaskHandle handle) throws DriverException {
        return delegate.recover(handle);
    }

    @Override
    public Optional<TaskHandle> findUnrecorded(TaskConfig task) throws DriverException {
        return delegate.findUnrecorded(task);
    }

    @Override
    public TaskStats stats(TaskHandle handle) throws DriverException {
        return delegate.stats(handle);
    }

    @Override
    public void close() {}
}
