package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.driver.Deadlines;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.driver.TaskStats;
import java.util.Optional;
import java.util.concurrent.ExecutionException;

/**
 * The task's process while its runner watches it, and what reaches it from outside the runner's thread: signals,
 * commands run inside it, stats readings. Each of them finds the task not running between its runs.
 */
final class LiveTask {

    /** The process being watched. */
    private record Live(Driver driver, TaskHandle handle) {}

    private final TaskRunnerConfig cfg;
    private final DriverCalls calls;
    private final TaskStatePublisher state;
    private final String name;
    private volatile Live live;

    LiveTask(TaskRunnerConfig cfg, DriverCalls calls, TaskStatePublisher state) {
        this.cfg = cfg;
        this.calls = calls;
        this.state = state;
        this.name = cfg.task().getName();
    }

    /** The runner watches {@code handle}'s process now. */
    void watching(Driver driver, TaskHandle handle) {
        live = new Live(driver, handle);
    }

    /** The runner no longer watches a process (it ended, or the runner stops). */
    void unwatched() {
        live = null;
    }

    private Live now() throws TaskNotRunningException {
        Live now = live;
        if (now == null) {
            throw new TaskNotRunningException("task " + name + " is not running (" + state.current() + ")");
        }
        return now;
    }

    /** See {@link TaskRunner#signal}. */
    void signal(String signal, String reason) throws DriverException, InterruptedException {
        Live now = now();
        new TaskSignaller(cfg, calls, state::event).send(now.driver(), now.handle(), signal, reason);
    }

    /** See {@link TaskRunner#exec}. */
    ExecProcess exec(ExecRequest request, String reason) throws DriverException, InterruptedException {
        Live now = now();
        state.event(TaskEvent.of(TaskEventType.Exec, cfg.clock().instant()).withMessage(reason));
        return calls.exec(now.driver(), now.handle(), request);
    }

    /**
     * Starts {@code request}'s command inside the task without an event: an exec check's probe, which runs every few
     * seconds and reports through the check's status instead.
     */
    ExecProcess execQuietly(ExecRequest request) throws DriverException, InterruptedException {
        Live now = now();
        return calls.exec(now.driver(), now.handle(), request);
    }

    /** See {@link TaskRunner#stats}. */
    Optional<TaskStats> stats() throws DriverException, InterruptedException {
        Live now = live;
        if (now == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(calls.stats(now.driver(), now.handle()));
        } catch (ExecutionException | Deadlines.DeadlineExceeded e) {
            if (live != now) {
                return Optional.empty(); // it exited meanwhile
            }
            throw new DriverException(DriverCalls.reason(e), e);
        }
    }
}
