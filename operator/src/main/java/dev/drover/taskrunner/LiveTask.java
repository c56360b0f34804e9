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

    /** The process of one run, while it is watched; compared by identity, so each run's is its own. */
    static final class Live {
        private final Driver driver;
        private final TaskHandle handle;

        private Live(Driver driver, TaskHandle handle) {
            this.driver = driver;
            this.handle = handle;
        }

        Driver driver() {
            return driver;
        }

        TaskHandle handle() {
            return handle;
        }
    }

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

    /** The runner watches {@code handle}'s process now; returns this run's, for what may act on this run alone. */
    Live watching(Driver driver, TaskHandle handle) {
        Live run = new Live(driver, handle);
        live = run;
        return run;
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

    /** The process of {@code run} if it is still the one watched: a later run's is never reached through it. */
    private Live still(Live run) throws TaskNotRunningException {
        Live now = now();
        if (now != run) {
            throw new TaskNotRunningException("task " + name + " is not running that process any more (it restarted)");
        }
        return now;
    }

    /** See {@link TaskRunner#signal}. */
    void signal(String signal, String reason) throws DriverException, InterruptedException {
        Live now = now();
        new TaskSignaller(cfg, calls, state::event).send(now.driver(), now.handle(), signal, reason);
    }

    /** {@link #signal}, to {@code run}'s process only. */
    void signal(Live run, String signal, String reason) throws DriverException, InterruptedException {
        Live now = still(run);
        new TaskSignaller(cfg, calls, state::event).send(now.driver(), now.handle(), signal, reason);
    }

    /** See {@link TaskRunner#exec}. */
    ExecProcess exec(ExecRequest request, String reason) throws DriverException, InterruptedException {
        Live now = now();
        state.event(TaskEvent.of(TaskEventType.Exec, cfg.clock().instant()).withMessage(reason));
        return calls.exec(now.driver(), now.handle(), request);
    }

    /**
     * Starts {@code request}'s command inside {@code run}'s process (never a later run's) without an event: an exec
     * check's probe, which runs every few seconds and reports through the check's status instead.
     */
    ExecProcess execQuietly(Live run, ExecRequest request) throws DriverException, InterruptedException {
        Live now = still(run);
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
