package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.TaskEvent;

/** What a {@link TaskRunningHook} may do to the task it watches. */
public interface RunningTask {

    /** Restarts the task once, not counted against its restart policy ({@code RestartSignaled}). */
    void restart(String reason);

    /** Sends {@code signal} to the task's process ({@code Signaling}). */
    void signal(String signal, String reason);

    /** Records a task event. */
    void event(TaskEvent e);
}
