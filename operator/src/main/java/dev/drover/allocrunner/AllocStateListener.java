package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.state.AllocId;
import java.util.List;

/**
 * Told of every change of one runner's state; must not block (the runner calls it inline). Each runner is given its
 * own listener when it is created, so a listener hears only of the runner it was given to, never of one that
 * replaced it; what it is told are values (the allocation's id, its state), not the runner.
 */
public interface AllocStateListener {

    /**
     * {@code events} are the task events behind the change (of the task named), oldest first: one, none for a change
     * without one, or several when a restarting task's changes were told together.
     */
    void allocStateChanged(AllocId id, AllocState state, String task, List<TaskEvent> events);

    /** A hook threw in {@code phase} (update, destroy, shutdown); the runner went on with the other hooks. */
    default void hookFailed(AllocId id, String hook, String phase, RuntimeException failure) {}

    /**
     * Something about the allocation as a whole that its user should see as a warning beside its task events (a
     * disk it may not take): a Warning Kubernetes Event with {@code reason}. Ignored by default (tests).
     */
    default void allocWarning(AllocId id, String reason, String message) {}
}
