package dev.drover.driver;

/** What was asked of a task needs it running, and it is not: it has exited, or has not started yet. */
public class TaskNotRunningException extends DriverException {

    public TaskNotRunningException(String message) {
        super(message);
    }
}
