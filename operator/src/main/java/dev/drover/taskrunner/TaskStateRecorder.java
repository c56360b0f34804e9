package dev.drover.taskrunner;

import dev.drover.api.Timestamps;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.common.UserText;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A task's state as docs/semantics.md defines it: {@code Pending → Running → Dead},
 * {@code failed} sticky once set, {@code restarts} counting Restarting events,
 * {@code startedAt} stamped on every start, {@code finishedAt} once, the newest
 * 10 events. Owned by one task runner; {@link #snapshot()} hands out copies.
 * An event's texts are cut at {@link #TEXT_LIMIT} characters: they may quote a
 * spec, and they are stored and sent in every status.
 */
final class TaskStateRecorder {

    private TaskState.State state = TaskState.State.Pending;
    private boolean failed;
    private int restarts;
    private String lastRestart;
    private String startedAt;
    private String finishedAt;
    private final List<TaskEvent> events = new ArrayList<>();
    /** The checks of the current run; null when the task has none or none runs. */
    private List<CheckStatus> checks;

    /** Longest text an event keeps (message, errors, restart reason). */
    static final int TEXT_LIMIT = 2048;

    TaskStateRecorder() {}

    /** Resumes from a stored state, as after an agent restart. */
    TaskStateRecorder(TaskState stored) {
        state = stored.getState() == null ? TaskState.State.Pending : stored.getState();
        failed = Boolean.TRUE.equals(stored.getFailed());
        restarts = stored.getRestarts() == null ? 0 : stored.getRestarts();
        lastRestart = stored.getLastRestart();
        startedAt = stored.getStartedAt();
        finishedAt = stored.getFinishedAt();
        if (stored.getEvents() != null) {
            events.addAll(stored.getEvents());
        }
        checks = stored.getChecks() == null ? null : List.copyOf(stored.getChecks());
    }

    void event(TaskEvent e) {
        e.setMessage(UserText.cut(e.getMessage(), TEXT_LIMIT));
        e.setRestartReason(UserText.cut(e.getRestartReason(), TEXT_LIMIT));
        e.setKillError(UserText.cut(e.getKillError(), TEXT_LIMIT));
        e.setValidationError(UserText.cut(e.getValidationError(), TEXT_LIMIT));
        e.setDriverError(UserText.cut(e.getDriverError(), TEXT_LIMIT));
        events.add(e);
        if (events.size() > TaskState.MAX_EVENTS) {
            events.subList(0, events.size() - TaskState.MAX_EVENTS).clear();
        }
        if (e.getType() == dev.drover.api.v1alpha1.TaskEventType.Restarting) {
            restarts++;
            lastRestart = e.getTime();
        }
    }

    void running(Instant at) {
        state = TaskState.State.Running;
        startedAt = Timestamps.format(at);
    }

    /** The checks of the current run, as their task runner's check hook last told them. */
    void checks(List<CheckStatus> now) {
        checks = now == null ? null : List.copyOf(now);
    }

    /** Between runs: no checks run, and those of the last run no longer tell anything. */
    void pending() {
        state = TaskState.State.Pending;
        checks = null;
    }

    void dead(Instant at, boolean failedNow) {
        state = TaskState.State.Dead;
        checks = null;
        failed |= failedNow;
        if (finishedAt == null) {
            finishedAt = Timestamps.format(at);
        }
    }

    void fail() {
        failed = true;
    }

    TaskState.State state() {
        return state;
    }

    boolean failed() {
        return failed;
    }

    /** Restarts counted (Restarting events), restored ones included. */
    int restarts() {
        return restarts;
    }

    TaskState snapshot() {
        TaskState s = new TaskState();
        s.setState(state);
        s.setFailed(failed);
        s.setRestarts(restarts);
        s.setLastRestart(lastRestart);
        s.setStartedAt(startedAt);
        s.setFinishedAt(finishedAt);
        s.setEvents(List.copyOf(events));
        s.setChecks(checks);
        return s;
    }
}
