package dev.drover.testing;

import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.mock.MockDriver;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** The mock driver (named "mock"), except that its stops fail, the task running on, until {@link #relent()}. */
public final class StubbornDriver extends ForwardingDriver {

    private final AtomicBoolean stubborn = new AtomicBoolean(true);
    private final AtomicInteger failedStops = new AtomicInteger();
    private final AtomicInteger starts = new AtomicInteger();

    public StubbornDriver(MockDriver mock) {
        super(mock);
    }

    /** From now on stops work. */
    public void relent() {
        stubborn.set(false);
    }

    /** How many stops failed so far. */
    public int failedStops() {
        return failedStops.get();
    }

    /** How many tasks it started so far (reattaches are not starts). */
    public int starts() {
        return starts.get();
    }

    @Override
    public TaskHandle start(TaskConfig task) throws DriverStartException {
        starts.incrementAndGet();
        return super.start(task);
    }

    @Override
    public void stop(TaskHandle handle, Duration timeout, String signal) throws DriverException {
        if (stubborn.get()) {
            failedStops.incrementAndGet();
            throw new DriverException("operation not permitted");
        }
        super.stop(handle, timeout, signal);
    }
}
