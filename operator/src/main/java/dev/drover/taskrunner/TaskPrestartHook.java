package dev.drover.taskrunner;

/**
 * Work done before each start of a task: validating it, building its
 * directory, its environment, reserving its devices. Hooks run in order; one
 * that fails stops the task for good with the event its exception names.
 */
public interface TaskPrestartHook {

    /** A short name, kept in the task's local state when {@link #runOnce()} hooks are done. */
    String name();

    /** Whether the hook's work survives restarts and agent restarts, so it runs only once per task. */
    default boolean runOnce() {
        return false;
    }

    void prestart(TaskHookContext ctx) throws TaskHookException;
}
