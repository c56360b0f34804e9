package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.common.Durations;
import dev.drover.driver.Deadlines;
import dev.drover.driver.Driver;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskHandle;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Killing a task as docs/semantics.md says: the shutdown delay (cut short if the
 * task exits), the kill signal, the kill timeout, then a forced kill; the
 * shutdown delay and the kill timeout are each capped by the agent's maximum.
 * A driver whose stop fails is tried again with back-off; after the scheduled
 * tries the error is reported, and the kill goes on being tried at the last
 * pause for as long as the process may be alive: a task is never given up for
 * dead while it may still run (and hold a device, a port, its directory).
 */
final class TaskKiller {

    private static final Logger LOG = LoggerFactory.getLogger(TaskKiller.class);

    private final TaskRunnerConfig cfg;
    private final Task task;
    private final String name;
    private final Consumer<TaskEvent> events;

    TaskKiller(TaskRunnerConfig cfg, Task task, Consumer<TaskEvent> events) {
        this.cfg = cfg;
        this.task = task;
        this.name = task.getName();
        this.events = events;
    }

    private void event(TaskEvent e) {
        events.accept(e);
    }

    /**
     * Kills the task; returns true once it is dead, false when {@code stopping} (the agent shuts down) came first:
     * then the task may still run and the next agent kills it.
     */
    boolean kill(Driver driver, TaskHandle handle, CompletableFuture<ExitResult> exit, CompletableFuture<?> stopping)
            throws InterruptedException {
        Duration delay = min(task.effectiveShutdownDelay(), cfg.maxKillTimeout());
        if (delay.isPositive()) {
            event(TaskEvent.of(TaskEventType.WaitingShutdownDelay, cfg.clock().instant())
                    .withMessage("Waiting for shutdown delay of " + Durations.format(delay)));
            try {
                exit.get(delay.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException expected) {
                // the delay passed (or the wait failed): kill now
            }
        }
        Duration timeout = min(task.effectiveKillTimeout(), cfg.maxKillTimeout());
        event(TaskEvent.of(TaskEventType.Killing, cfg.clock().instant())
                .withKillTimeout(timeout)
                .withMessage("Sent interrupt. Waiting " + Durations.format(timeout) + " before force killing"));
        if (!exit.isDone() && !stopUntilDead(driver, handle, timeout, exit, stopping)) {
            return false;
        }
        event(TaskEvent.of(TaskEventType.Killed, cfg.clock().instant()).withMessage("Task successfully killed"));
        destroy(driver, handle);
        return true;
    }

    /**
     * Stops the task, trying again after each pause of the back-off until it is dead (true) or {@code stopping}
     * completes (false). Once the scheduled tries have failed, a {@code DriverFailure} event with the
     * {@code killError} says so; the tries go on at the last pause.
     */
    private boolean stopUntilDead(
            Driver driver,
            TaskHandle handle,
            Duration timeout,
            CompletableFuture<ExitResult> exit,
            CompletableFuture<?> stopping)
            throws InterruptedException {
        TaskRunnerConfig.StopRetry retry = cfg.stopRetry();
        for (int attempt = 0; !exit.isDone(); attempt++) {
            String error;
            try {
                Deadlines.call("stopping " + name, timeout.plus(cfg.driverDeadline()), () -> {
                    driver.stop(handle, timeout, task.effectiveKillSignal());
                    return null;
                });
                Deadlines.await("waiting for " + name + " to exit", cfg.driverDeadline(), driver.exit(handle));
                return true;
            } catch (Deadlines.DeadlineExceeded | ExecutionException e) {
                error = e instanceof ExecutionException ee && ee.getCause() != null
                        ? ee.getCause().getMessage()
                        : e.getMessage();
                LOG.warn("stopping task {}/{} failed (attempt {}): {}", cfg.allocId(), name, attempt + 1, error);
            }
            Duration pause = retry.pause(attempt);
            if (attempt == retry.backoff().size()) {
                event(TaskEvent.of(TaskEventType.DriverFailure, cfg.clock().instant())
                        .withKillError(error)
                        .withMessage("Task could not be killed: " + error + "; trying again every "
                                + Durations.format(pause) + " until it is dead"));
            }
            try {
                CompletableFuture.anyOf(stopping, exit).get(pause.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException next) {
                // the pause passed: try again
            }
            if (stopping.isDone() && !exit.isDone()) {
                return false;
            }
        }
        return true;
    }

    void destroy(Driver driver, TaskHandle handle) {
        try {
            Deadlines.call("cleaning up " + name, cfg.driverDeadline(), () -> {
                driver.destroy(handle);
                return null;
            });
        } catch (Exception e) {
            LOG.warn("cleaning up task {}/{} failed: {}", cfg.allocId(), name, e.toString());
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
