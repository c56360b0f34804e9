package dev.drover.taskrunner;

import dev.drover.api.Signals;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import java.util.function.Consumer;

/**
 * Sends a signal to a running task as docs/semantics.md says: a {@code Signaling} event first (so that what the
 * task does with the signal, such as exiting, comes after it), then the driver's signal within the runner's deadline.
 * A send that fails is a {@code DriverFailure} event; one that finds the task gone is not, its exit has an event of
 * its own.
 */
final class TaskSignaller {

    private final TaskRunnerConfig cfg;
    private final DriverCalls calls;
    private final Consumer<TaskEvent> events;

    TaskSignaller(TaskRunnerConfig cfg, DriverCalls calls, Consumer<TaskEvent> events) {
        this.cfg = cfg;
        this.calls = calls;
        this.events = events;
    }

    void send(Driver driver, TaskHandle handle, String signal, String reason)
            throws DriverException, InterruptedException {
        String sig = Signals.canonical(signal);
        events.accept(TaskEvent.of(TaskEventType.Signaling, cfg.clock().instant())
                .withSignal(sig)
                .withMessage(reason));
        try {
            calls.signal(driver, handle, sig);
        } catch (TaskNotRunningException e) {
            throw e;
        } catch (DriverException e) {
            events.accept(TaskEvent.of(TaskEventType.DriverFailure, cfg.clock().instant())
                    .withDriverError(e.getMessage())
                    .withMessage("Sending " + sig + " failed: " + e.getMessage()));
            throw e;
        }
    }
}
