package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** A task as its runner last reported it. Times are RFC 3339 strings, as Kubernetes writes them. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TaskState {

    /** The newest events kept; older ones are dropped. */
    public static final int MAX_EVENTS = 10;

    /** Where a task is in its life: {@code Pending → Running → Dead}. */
    public enum State {
        Pending,
        Running,
        Dead
    }

    @JsonPropertyDescription("Pending, Running or Dead.")
    private State state;

    @JsonPropertyDescription("Whether the task failed for good.")
    private Boolean failed;

    @JsonPropertyDescription("How many times the task restarted.")
    private Integer restarts;

    @JsonPropertyDescription("When the task last restarted (RFC 3339).")
    private String lastRestart;

    @JsonPropertyDescription("When the task's current or last run started (RFC 3339).")
    private String startedAt;

    @JsonPropertyDescription("When the task died (RFC 3339).")
    private String finishedAt;

    @JsonPropertyDescription("The task's newest events, oldest first.")
    private List<TaskEvent> events = new ArrayList<>();

    @JsonPropertyDescription("Each check's health, in the spec's order; written when a status changes.")
    private List<CheckStatus> checks;

    public State getState() {
        return state;
    }

    public void setState(State state) {
        this.state = state;
    }

    public Boolean getFailed() {
        return failed;
    }

    public void setFailed(Boolean failed) {
        this.failed = failed;
    }

    public Integer getRestarts() {
        return restarts;
    }

    public void setRestarts(Integer restarts) {
        this.restarts = restarts;
    }

    public String getLastRestart() {
        return lastRestart;
    }

    public void setLastRestart(String lastRestart) {
        this.lastRestart = lastRestart;
    }

    public String getStartedAt() {
        return startedAt;
    }

    public void setStartedAt(String startedAt) {
        this.startedAt = startedAt;
    }

    public String getFinishedAt() {
        return finishedAt;
    }

    public void setFinishedAt(String finishedAt) {
        this.finishedAt = finishedAt;
    }

    public List<TaskEvent> getEvents() {
        return events;
    }

    public void setEvents(List<TaskEvent> events) {
        this.events = events;
    }

    /** The task's checks in the order of the spec; null when it has none (or none runs yet). */
    public List<CheckStatus> getChecks() {
        return checks;
    }

    public void setChecks(List<CheckStatus> checks) {
        this.checks = checks;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TaskState t
                && state == t.state
                && Objects.equals(failed, t.failed)
                && Objects.equals(restarts, t.restarts)
                && Objects.equals(lastRestart, t.lastRestart)
                && Objects.equals(startedAt, t.startedAt)
                && Objects.equals(finishedAt, t.finishedAt)
                && Objects.equals(events, t.events)
                && Objects.equals(checks, t.checks);
    }

    @Override
    public int hashCode() {
        return Objects.hash(state, failed, restarts, lastRestart, startedAt, finishedAt, events, checks);
    }
}
