package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import java.util.List;

/** What a {@link TaskRunningHook} may do to the task it watches. */
public interface RunningTask {

    /** The task's definition this run started with. */
    dev.drover.api.v1alpha1.Task task();

    /** Restarts the task once, not counted against its restart policy ({@code RestartSignaled}). */
    void restart(String reason);

    /**
     * Restarts the task because it fails (a check, as its {@code checkRestart} says), counted against its restart
     * policy as a failed exit is: {@code Restarting}, or {@code NotRestarting} and failed once the policy is spent;
     * {@code reason} leads that event's message.
     */
    void restartFailing(String reason);

    /** Sends {@code signal} to the task's process ({@code Signaling}). */
    void signal(String signal, String reason);

    /**
     * Starts {@code request}'s command inside the task, in its confinement, without a task event (an exec check's
     * probe); the caller reads, waits for and closes what it returns.
     *
     * @throws dev.drover.driver.TaskNotRunningException when the task's process ended meanwhile
     */
    ExecProcess exec(ExecRequest request) throws DriverException, InterruptedException;

    /**
     * Sets the task's checks as its state reports them ({@code taskStates[].checks}), with {@code event} (null for
     * none) telling why: one status change for both.
     */
    void checks(List<CheckStatus> checks, TaskEvent event);

    /** Records a task event. */
    void event(TaskEvent e);
}
