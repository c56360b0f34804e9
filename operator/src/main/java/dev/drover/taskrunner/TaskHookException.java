package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.TaskEventType;

/** A hook could not do its work; the task fails with an event of {@link #eventType()}. */
public final class TaskHookException extends Exception {

    private final TaskEventType eventType;

    public TaskHookException(TaskEventType eventType, String message) {
        super(message);
        this.eventType = eventType;
    }

    public TaskHookException(TaskEventType eventType, String message, Throwable cause) {
        super(message, cause);
        this.eventType = eventType;
    }

    /** {@code FailedValidation} or {@code SetupFailure}. */
    public TaskEventType eventType() {
        return eventType;
    }
}
