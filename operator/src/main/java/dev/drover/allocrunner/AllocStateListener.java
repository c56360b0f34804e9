package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.TaskEvent;

/** Told of every change of an allocation's state; must not block (runners call it inline). */
public interface AllocStateListener {

    /** {@code event} is the task event behind the change (with its task's name), or null. */
    void allocStateChanged(AllocRunner runner, AllocState state, String task, TaskEvent event);

    /** A hook threw in {@code phase} (update, destroy, shutdown); the runner went on with the other hooks. */
    default void hookFailed(AllocRunner runner, String hook, String phase, RuntimeException failure) {
    }

    /**
     * Something about the allocation as a whole that its user should see as a warning beside its task events (a
     * disk it may not take): a Warning Kubernetes Event with {@code reason}. Ignored by default (tests).
     */
    default void allocWarning(AllocRunner runner, String reason, String message) {
    }
}
