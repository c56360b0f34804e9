package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.TaskNotRunningException;
import java.util.List;

/**
 * The running task as its {@link TaskRunningHook}s see it: its runner's restarts, its process, its state. A view is
 * of one run: its signals and commands reach that run's process, and after it they find the task not running.
 */
final class RunningTaskView implements RunningTask {

    private final Task task;
    private final RestartRequests restarts;
    private final LiveTask live;
    private final LiveTask.Live run;
    private final TaskStatePublisher state;

    RunningTaskView(Task task, RestartRequests restarts, LiveTask live, LiveTask.Live run, TaskStatePublisher state) {
        this.task = task;
        this.restarts = restarts;
        this.live = live;
        this.run = run;
        this.state = state;
    }

    @Override
    public Task task() {
        return task;
    }

    @Override
    public void restart(String reason) {
        restarts.ask(reason, false);
    }

    @Override
    public void restartFailing(String reason) {
        restarts.ask(reason, true);
    }

    @Override
    public void signal(String name, String reason) {
        try {
            live.signal(run, name, reason);
        } catch (TaskNotRunningException ended) {
            // it exited meanwhile: its exit has an event of its own
        } catch (DriverException recorded) {
            // a DriverFailure event says so; the task runs on
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public ExecProcess exec(ExecRequest request) throws DriverException, InterruptedException {
        return live.execQuietly(run, request);
    }

    @Override
    public void checks(List<CheckStatus> checks, TaskEvent event) {
        state.checks(checks, event);
    }

    @Override
    public List<CheckStatus> reportedChecks() {
        List<CheckStatus> reported = state.snapshot().getChecks();
        return reported == null ? List.of() : reported;
    }

    @Override
    public void event(TaskEvent e) {
        state.event(e);
    }
}
