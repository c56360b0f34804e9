package dev.drover.testing;

import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskStats;
import dev.drover.driver.mock.MockDriver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** The mock driver (named "mock"), except that its stops fail, the task running on, until {@link #relent()}. */
public final class StubbornDriver implements Driver {

    private final MockDriver mock;
    private final AtomicBoolean stubborn = new AtomicBoolean(true);
    private final AtomicInteger failedStops = new AtomicInteger();

    public StubbornDriver(MockDriver mock) {
        this.mock = mock;
    }

    /** From now on stops work. */
    public void relent() {
        stubborn.set(false);
    }

    /** How many stops failed so far. */
    public int failedStops() {
        return failedStops.get();
    }

    @Override
    public String name() {
        return mock.name();
    }

    @Override
    public List<String> validate(Map<String, Object> config) {
        return mock.validate(config);
    }

    @Override
    public TaskHandle start(TaskConfig task) throws DriverStartException {
        return mock.start(task);
    }

    @Override
    public CompletableFuture<ExitResult> exit(TaskHandle handle) {
        return mock.exit(handle);
    }

    @Override
    public void stop(TaskHandle handle, Duration timeout, String signal) throws DriverException {
        if (stubborn.get()) {
            failedStops.incrementAndGet();
            throw new DriverException("operation not permitted");
        }
        mock.stop(handle, timeout, signal);
    }

    @Override
    public void destroy(TaskHandle handle) {
        mock.destroy(handle);
    }

    @Override
    public TaskHandle recover(TaskHandle handle) {
        return mock.recover(handle);
    }

    @Override
    public TaskStats stats(TaskHandle handle) throws DriverException {
        return mock.stats(handle);
    }

    @Override
    public void close() {
    }
}
