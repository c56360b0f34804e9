package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.driver.Driver;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskHandle;
import dev.drover.taskrunner.restarts.Outcome;
import java.time.InstantSource;
import java.util.concurrent.CompletableFuture;

/**
 * How a run of the task ended, once its watch woke: a kill (its cause recorded, then the task killed), an exit
 * ({@code Terminated}, and the driver's hold on the task let go), or a restart asked for ({@code RestartSignaled}, or
 * for a failing check its words kept for the decision, then the task killed). The answer is the restart tracker's
 * input ({@link Outcome}); {@link RestartStep} decides what follows. Runner thread only.
 */
final class RunEnd {

    private final TaskStatePublisher state;
    private final InstantSource clock;
    private final TaskDefinition definition;
    private final RestartRequests restarts;
    private final CompletableFuture<TaskEvent> kill;
    private final CompletableFuture<Void> shutdown;
    /** Why the task was restarted as a failure (a check's words), for the decision that follows. */
    private String failureCause;

    RunEnd(
            TaskStatePublisher state,
            InstantSource clock,
            TaskDefinition definition,
            RestartRequests restarts,
            CompletableFuture<TaskEvent> kill,
            CompletableFuture<Void> shutdown) {
        this.state = state;
        this.clock = clock;
        this.definition = definition;
        this.restarts = restarts;
        this.kill = kill;
        this.shutdown = shutdown;
    }

    /** Whether anything ends the run: false when only a change the publisher held fell due, and the task runs on. */
    boolean ended(CompletableFuture<ExitResult> exit, CompletableFuture<RestartRequests.Ask> restart) {
        return exit.isDone() || kill.isDone() || shutdown.isDone() || restart.isDone();
    }

    /**
     * What ended the run of {@code handle}, recorded as events; null on shutdown, or when the runner shut down before
     * a kill worked (the state then stored: the next agent kills it).
     */
    Outcome outcome(
            Driver driver,
            TaskHandle handle,
            CompletableFuture<ExitResult> exit,
            CompletableFuture<RestartRequests.Ask> restart)
            throws InterruptedException {
        if (kill.isDone() && !exit.isDone()) {
            TaskEvent cause = kill.join();
            if (cause != null) {
                state.event(cause);
            }
            if (!definition.killer().kill(driver, handle, exit, shutdown)) {
                state.store();
                return null; // shutting down before the kill worked: the next agent kills it
            }
            return new Outcome.Killed();
        }
        if (exit.isDone()) {
            ExitResult r = DriverCalls.exitResult(exit);
            state.event(TaskEvent.of(TaskEventType.Terminated, clock.instant())
                    .withExit(r.exitCode(), r.signal())
                    .withOomKilled(r.oomKilled())
                    .withMessage((r.oomKilled() ? "OOM Killed; " : "")
                            + (r.error() != null
                                    ? r.error()
                                    : "Exit Code: " + r.exitCode()
                                            + (r.signal() == null ? "" : ", Signal: " + r.signal()))));
            definition.killer().destroy(driver, handle);
            return new Outcome.Exited(r.exitCode(), r.signal(), r.error());
        }
        if (restart.isDone()) {
            restarts.taken(restart);
            RestartRequests.Ask ask = restart.join();
            if (ask.failure()) {
                failureCause = ask.reason(); // told by the Restarting or NotRestarting event after the kill
            } else {
                state.event(TaskEvent.of(TaskEventType.RestartSignaled, clock.instant())
                        .withRestartReason(ask.reason())
                        .withMessage(ask.reason()));
            }
            if (!definition.killer().kill(driver, handle, exit, shutdown)) {
                state.store();
                return null;
            }
            return new Outcome.RestartRequested(ask.failure());
        }
        state.store();
        return null;
    }

    /** The failing check's words that caused the last run's end, once (null when there are none). */
    String takeFailureCause() {
        String cause = failureCause;
        failureCause = null;
        return cause;
    }
}
