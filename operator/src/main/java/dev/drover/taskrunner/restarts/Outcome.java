package dev.drover.taskrunner.restarts;

/** What happened to a task, as the restart tracker needs to know it. */
public sealed interface Outcome {

    /** The task exited on its own (or was signalled from outside the agent). */
    record Exited(int exitCode, String signal, String error) implements Outcome {
        /** Exit code 0, no signal, no error. */
        public boolean clean() {
            return exitCode == 0 && signal == null && error == null;
        }
    }

    /** Starting the task failed. */
    record StartFailed(String error, boolean recoverable) implements Outcome {}

    /** The agent killed the task on purpose (stop, sibling failure, leader death, destroy). */
    record Killed() implements Outcome {}

    /**
     * A restart was asked for: by a user or a spec change ({@code failure} false: the
     * restart is free), or because something failed around the task ({@code failure} true:
     * it counts against the policy like a failed exit).
     */
    record RestartRequested(boolean failure) implements Outcome {}
}
