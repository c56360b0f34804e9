package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.Task;
import dev.drover.driver.Deadlines;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task runner's calls into its task's driver, each within a deadline: a driver that hangs holds neither the
 * runner nor the API request that asked. What went wrong in a driver reads as the driver's own words.
 */
final class DriverCalls {

    private static final Logger LOG = LoggerFactory.getLogger(DriverCalls.class);
    /** The longest a stats reading may take: an API request waits on it. */
    private static final Duration STATS_DEADLINE = Duration.ofSeconds(5);

    private final TaskRunnerConfig cfg;
    private final String name;

    DriverCalls(TaskRunnerConfig cfg) {
        this.cfg = cfg;
        this.name = cfg.task().getName();
    }

    /** {@link Driver#prepare}, within {@link Driver#PREPARE_DEADLINE}. */
    void prepare(Driver driver, TaskConfig config) throws DriverStartException, InterruptedException {
        try {
            Deadlines.call("preparing " + name, Driver.PREPARE_DEADLINE, () -> {
                driver.prepare(config);
                return null;
            });
        } catch (ExecutionException e) {
            if (e.getCause() instanceof DriverStartException d) {
                throw d;
            }
            throw new DriverStartException("driver failed: " + e.getCause(), true, e.getCause());
        } catch (Deadlines.DeadlineExceeded e) {
            throw new DriverStartException(e.getMessage(), true);
        }
    }

    TaskHandle start(Driver driver, TaskConfig config) throws DriverStartException, InterruptedException {
        try {
            return Deadlines.call("starting " + name, cfg.driverDeadline(), () -> driver.start(config));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof DriverStartException d) {
                throw d;
            }
            throw new DriverStartException("driver failed: " + e.getCause(), true, e.getCause());
        } catch (Deadlines.DeadlineExceeded e) {
            throw new DriverStartException(e.getMessage(), true);
        }
    }

    /** Reattaches to the process of a stored handle (an earlier agent started it). */
    TaskHandle recover(Driver driver, TaskHandle stored) throws Exception {
        return Deadlines.call("reattaching to " + name, cfg.driverDeadline(), () -> driver.recover(stored));
    }

    /**
     * A process the agent before the last one started for this task without storing its handle (it was killed
     * in between): the kill must reach it too. Null when the driver knows of none.
     */
    TaskHandle findUnrecorded(Task task) {
        Driver driver = cfg.drivers().find(task.getDriver()).orElse(null);
        if (driver == null) {
            return null;
        }
        try {
            return Deadlines.call(
                            "looking for an unrecorded start of " + name,
                            cfg.driverDeadline(),
                            () -> driver.findUnrecorded(cfg.template()))
                    .orElse(null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (Exception e) {
            LOG.warn(
                    "task {}/{}: could not look for a process an earlier agent started: {}",
                    cfg.allocId(),
                    name,
                    reason(e));
            return null;
        }
    }

    /** Sends {@code signal} to the task within the runner's deadline; a failure reads as the driver's own. */
    void signal(Driver driver, TaskHandle handle, String signal) throws DriverException, InterruptedException {
        try {
            Deadlines.call("sending " + signal + " to " + name, cfg.driverDeadline(), () -> {
                driver.signal(handle, signal);
                return null;
            });
        } catch (ExecutionException e) {
            if (e.getCause() instanceof DriverException d) {
                throw d;
            }
            throw new DriverException("driver failed: " + e.getCause(), e.getCause());
        } catch (Deadlines.DeadlineExceeded e) {
            throw new DriverException(e.getMessage(), e);
        }
    }

    /**
     * Starts a command inside the task within the runner's deadline; a failure reads as the driver's own. A command
     * the driver starts only after the deadline has passed is closed (killed) at once, as nobody will read it.
     */
    ExecProcess exec(Driver driver, TaskHandle handle, ExecRequest request)
            throws DriverException, InterruptedException {
        CompletableFuture<ExecProcess> started = new CompletableFuture<>();
        Thread.ofVirtual().name("driver-exec").start(() -> {
            try {
                started.complete(driver.exec(handle, request));
            } catch (Throwable e) {
                started.completeExceptionally(e);
            }
        });
        try {
            return Deadlines.await("starting " + request.describe() + " in " + name, cfg.driverDeadline(), started);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof DriverException d) {
                throw d;
            }
            throw new DriverException("driver failed: " + e.getCause(), e.getCause());
        } catch (Deadlines.DeadlineExceeded | InterruptedException e) {
            started.thenAccept(ExecProcess::close);
            if (e instanceof InterruptedException interrupted) {
                throw interrupted;
            }
            throw new DriverException(e.getMessage(), e);
        }
    }

    TaskStats stats(Driver driver, TaskHandle handle)
            throws ExecutionException, Deadlines.DeadlineExceeded, InterruptedException {
        return Deadlines.call("reading the usage of " + name, STATS_DEADLINE, () -> driver.stats(handle));
    }

    /** How the process ended; a driver that lost track of it gives an exit of -1 that says so. */
    static ExitResult exitResult(CompletableFuture<ExitResult> exit) {
        try {
            return exit.join();
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            return new ExitResult(-1, null, "lost track of the task: " + cause.getMessage());
        }
    }

    /** What went wrong in a bounded driver call: the driver's own exception, not the wrapper around it. */
    static String reason(Exception e) {
        return e instanceof ExecutionException ee && ee.getCause() != null
                ? ee.getCause().getMessage()
                : e.getMessage();
    }
}
