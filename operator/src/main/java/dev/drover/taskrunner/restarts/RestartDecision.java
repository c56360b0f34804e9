package dev.drover.taskrunner.restarts;

import java.time.Duration;

/**
 * What the task runner does next.
 *
 * @param delay  how long to wait before starting again; zero unless {@link Kind#RESTART}
 * @param reason a sentence for the task event ({@code restartReason})
 * @param failed whether the task is now failed for good
 */
public record RestartDecision(Kind kind, Duration delay, String reason, boolean failed) {

    public enum Kind {
        /** Start again after {@code delay}. */
        RESTART,
        /** Done, successfully: the task stays dead, not failed. */
        TERMINATED,
        /** The policy gives up: the task stays dead and is failed. */
        NOT_RESTARTING,
        /** The agent killed it: dead, not failed, never restarted. */
        KILLED
    }

    public boolean restarts() {
        return kind == Kind.RESTART;
    }
}
