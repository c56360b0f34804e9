package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.drover.api.Timestamps;
import dev.drover.common.Durations;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * One step in a task's life. {@code type} and {@code time} are always set; the
 * other fields carry the details its type calls for (docs/semantics.md, Task events), e.g. a
 * {@code Terminated} event has {@code exitCode} and {@code signal}, and {@code oomKilled} when the kernel's OOM killer
 * ended the task.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TaskEvent {

    @JsonPropertyDescription("The kind of event, e.g. Started, Terminated, Restarting (docs/semantics.md lists them).")
    private TaskEventType type;

    @JsonPropertyDescription("When the event happened (RFC 3339).")
    private String time;

    @JsonPropertyDescription("A sentence saying what happened.")
    private String message;

    @JsonPropertyDescription("The task's exit code (Terminated).")
    private Integer exitCode;

    @JsonPropertyDescription("The signal that ended the task (Terminated) or that was sent to it (Signaling).")
    private String signal;

    @JsonPropertyDescription("True when the kernel's OOM killer ended the task (Terminated).")
    private Boolean oomKilled;

    @JsonPropertyDescription("How long the task waits before it starts again (Restarting).")
    private String startDelay;

    @JsonPropertyDescription("Why the task restarts or does not (Restarting, NotRestarting, RestartSignaled).")
    private String restartReason;

    @JsonPropertyDescription("The time the kill allows before a forced kill (Killing).")
    private String killTimeout;

    @JsonPropertyDescription("Why killing the task failed (DriverFailure).")
    private String killError;

    @JsonPropertyDescription("The task whose failure kills this one (SiblingTaskFailed).")
    private String failedSibling;

    @JsonPropertyDescription("Why the driver refused the task (FailedValidation).")
    private String validationError;

    @JsonPropertyDescription("Why the driver failed to start or signal the task (DriverFailure).")
    private String driverError;

    @JsonPropertyDescription("The check whose status changed (CheckStatusChanged).")
    private String check;

    @JsonPropertyDescription("The status the check has now (CheckStatusChanged).")
    private CheckStatus.Status checkStatus;

    public TaskEvent() {}

    public static TaskEvent of(TaskEventType type, Instant time) {
        TaskEvent e = new TaskEvent();
        e.type = Objects.requireNonNull(type, "type");
        e.time = Timestamps.format(time);
        return e;
    }

    public TaskEvent withMessage(String message) {
        this.message = message;
        return this;
    }

    public TaskEvent withExit(Integer exitCode, String signal) {
        this.exitCode = exitCode;
        this.signal = signal;
        return this;
    }

    /** The signal a {@code Signaling} event sends the task. */
    public TaskEvent withSignal(String signal) {
        this.signal = signal;
        return this;
    }

    /** Marks a {@code Terminated} event as an out-of-memory kill; leaves the field out otherwise. */
    public TaskEvent withOomKilled(boolean oomKilled) {
        this.oomKilled = oomKilled ? Boolean.TRUE : null;
        return this;
    }

    public TaskEvent withStartDelay(Duration delay) {
        this.startDelay = Durations.format(delay);
        return this;
    }

    public TaskEvent withRestartReason(String reason) {
        this.restartReason = reason;
        return this;
    }

    public TaskEvent withKillTimeout(Duration timeout) {
        this.killTimeout = Durations.format(timeout);
        return this;
    }

    public TaskEvent withKillError(String error) {
        this.killError = error;
        return this;
    }

    public TaskEvent withFailedSibling(String sibling) {
        this.failedSibling = sibling;
        return this;
    }

    public TaskEvent withValidationError(String error) {
        this.validationError = error;
        return this;
    }

    public TaskEvent withDriverError(String error) {
        this.driverError = error;
        return this;
    }

    /** A {@code CheckStatusChanged} event's check and the status it has now. */
    public TaskEvent withCheck(String name, CheckStatus.Status status) {
        this.check = name;
        this.checkStatus = status;
        return this;
    }

    public TaskEventType getType() {
        return type;
    }

    public void setType(TaskEventType type) {
        this.type = type;
    }

    public String getTime() {
        return time;
    }

    public void setTime(String time) {
        this.time = time;
    }

    public String getMessage() {
        return message;
    }

    public void setMessage(String message) {
        this.message = message;
    }

    public Integer getExitCode() {
        return exitCode;
    }

    public void setExitCode(Integer exitCode) {
        this.exitCode = exitCode;
    }

    public String getSignal() {
        return signal;
    }

    public void setSignal(String signal) {
        this.signal = signal;
    }

    public Boolean getOomKilled() {
        return oomKilled;
    }

    public void setOomKilled(Boolean oomKilled) {
        this.oomKilled = oomKilled;
    }

    public String getStartDelay() {
        return startDelay;
    }

    public void setStartDelay(String startDelay) {
        this.startDelay = startDelay;
    }

    public String getRestartReason() {
        return restartReason;
    }

    public void setRestartReason(String restartReason) {
        this.restartReason = restartReason;
    }

    public String getKillTimeout() {
        return killTimeout;
    }

    public void setKillTimeout(String killTimeout) {
        this.killTimeout = killTimeout;
    }

    public String getKillError() {
        return killError;
    }

    public void setKillError(String killError) {
        this.killError = killError;
    }

    public String getFailedSibling() {
        return failedSibling;
    }

    public void setFailedSibling(String failedSibling) {
        this.failedSibling = failedSibling;
    }

    public String getValidationError() {
        return validationError;
    }

    public void setValidationError(String validationError) {
        this.validationError = validationError;
    }

    public String getDriverError() {
        return driverError;
    }

    public void setDriverError(String driverError) {
        this.driverError = driverError;
    }

    /** The check whose status changed ({@code CheckStatusChanged}). */
    public String getCheck() {
        return check;
    }

    public void setCheck(String check) {
        this.check = check;
    }

    /** The status the check has now ({@code CheckStatusChanged}). */
    public CheckStatus.Status getCheckStatus() {
        return checkStatus;
    }

    public void setCheckStatus(CheckStatus.Status checkStatus) {
        this.checkStatus = checkStatus;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TaskEvent e
                && type == e.type
                && Objects.equals(time, e.time)
                && Objects.equals(message, e.message)
                && Objects.equals(exitCode, e.exitCode)
                && Objects.equals(signal, e.signal)
                && Objects.equals(oomKilled, e.oomKilled)
                && Objects.equals(startDelay, e.startDelay)
                && Objects.equals(restartReason, e.restartReason)
                && Objects.equals(killTimeout, e.killTimeout)
                && Objects.equals(killError, e.killError)
                && Objects.equals(failedSibling, e.failedSibling)
                && Objects.equals(validationError, e.validationError)
                && Objects.equals(driverError, e.driverError)
                && Objects.equals(check, e.check)
                && checkStatus == e.checkStatus;
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                type,
                time,
                message,
                exitCode,
                signal,
                oomKilled,
                startDelay,
                restartReason,
                killTimeout,
                killError,
                failedSibling,
                validationError,
                driverError,
                check,
                checkStatus);
    }

    @Override
    public String toString() {
        return type + "@" + time + (message == null ? "" : ": " + message);
    }
}
