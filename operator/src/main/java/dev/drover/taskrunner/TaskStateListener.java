package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskState;

/** Told of every change of a task's state; must not block (the runner calls it inline). */
public interface TaskStateListener {

    /** {@code event} is the event that caused the change, or null for a change without one. */
    void taskStateChanged(String task, TaskState state, TaskEvent event);
}
