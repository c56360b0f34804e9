package dev.drover.taskrunner;

/**
 * Work that lasts as long as the task's process runs (keeping its credentials fresh): begun after each start and
 * after a reattach by a restarted agent, ended when the process ends or the runner stops watching it.
 */
public interface TaskRunningHook {

    /** The task runs now; returns at once, leaving any lasting work to a thread of its own. */
    void running(RunningTask task);

    /** The process ended or is no longer watched; returns once the hook's work has stopped. */
    void stopped() throws InterruptedException;
}
