package dev.drover.taskrunner;

import dev.drover.api.Durations;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.driver.Deadlines;
import dev.drover.driver.Driver;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskHandle;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Killing a task as SEMANTICS.md says: the shutdown delay (cut short if the
 * task exits), the kill signal, the kill timeout capped by the agent's maximum,
 * then a forced kill; a driver whose stop fails is tried again with back-off,
 * and after the last try the error is reported rather than waited on forever.
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

    void kill(Driver driver, TaskHandle handle, CompletableFuture<ExitResult> exit)
            throws InterruptedException {
        Duration delay = task.effectiveShutdownDelay();
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
        event(TaskEvent.of(TaskEventType.Killing, cfg.clock().instant()).withKillTimeout(timeout)
                .withMessage("Sent interrupt. Waiting " + Durations.format(timeout) + " before force killing"));
        String killError = null;
        if (!exit.isDone()) {
            killError = stopWithRetries(driver, handle, timeout);
        }
        TaskEvent killed = TaskEvent.of(TaskEventType.Killed, cfg.clock().instant()).withMessage("Task successfully killed");
        if (killError != null) {
            killed.withKillError(killError).withMessage("Task could not be killed: " + killError);
        }
        event(killed);
        destroy(driver, handle);
    }

    /** Null when the task is dead; otherwise the last error, after every retry failed. */
    private String stopWithRetries(Driver driver, TaskHandle handle, Duration timeout) throws InterruptedException {
        List<Duration> backoff = cfg.stopRetry().backoff();
        String error = null;
        for (int attempt = 0; attempt <= backoff.size(); attempt++) {
            try {
                Deadlines.call("stopping " + name, timeout.plus(cfg.driverDeadline()), () -> {
                    driver.stop(handle, timeout, task.effectiveKillSignal());
                    return null;
                });
                Deadlines.await("waiting for " + name + " to exit", cfg.driverDeadline(), driver.exit(handle));
                return null;
            } catch (Deadlines.DeadlineExceeded | ExecutionException e) {
                error = e instanceof ExecutionException ee && ee.getCause() != null ? ee.getCause().getMessage() : e.getMessage();
                LOG.warn("stopping task {}/{} failed (attempt {}): {}", cfg.allocId(), name, attempt + 1, error);
            }
            if (attempt < backoff.size()) {
                Thread.sleep(backoff.get(attempt));
            }
        }
        return error;
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
