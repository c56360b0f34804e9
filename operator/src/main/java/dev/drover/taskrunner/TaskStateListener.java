package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskState;
import java.util.List;

/** Told of every change of a task's state; must not block (the runner calls it inline). */
public interface TaskStateListener {

    /**
     * {@code events} are the events behind the change, oldest first: one, or none for a change without one, or
     * several when changes of a restarting task were told together ({@link PublishPacing}).
     */
    void taskStateChanged(String task, TaskState state, List<TaskEvent> events);
}
