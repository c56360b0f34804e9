package dev.drover.state;

import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The store's own copies of task states, which a put of an equal state is compared with
 * ({@link DeduplicatingStore#dropIfUnchanged}): a task runner puts its state on every task event, and an unchanged
 * one must cost a comparison, not an encoding and a hash. {@link TaskState} is a mutable API object, so the store
 * keeps a copy that no caller holds: a caller that changes a state after putting it, and puts it again, is compared
 * with what was stored, not with itself.
 *
 * <p>A task's events are kept newest ten, and a new state mostly repeats the last one's: an event equal to one of the
 * previous copy's is shared with it, so a task costs the store one copy of each of its events however often its
 * state is put. No copy is ever handed out or changed.
 */
final class TaskStateSnapshots {

    private TaskStateSnapshots() {}

    /** A copy of {@code state} equal to it; {@code previous} is the copy made for the key's last state, or null. */
    static TaskState copy(TaskState state, Object previous) {
        TaskState c = new TaskState();
        c.setState(state.getState());
        c.setFailed(state.getFailed());
        c.setRestarts(state.getRestarts());
        c.setLastRestart(state.getLastRestart());
        c.setStartedAt(state.getStartedAt());
        c.setFinishedAt(state.getFinishedAt());
        List<TaskEvent> known = previous instanceof TaskState p && p.getEvents() != null ? p.getEvents() : List.of();
        c.setEvents(copyEach(state.getEvents(), e -> sharedOrCopy(e, known)));
        c.setChecks(copyEach(
                state.getChecks(),
                s -> s == null ? null : new CheckStatus(s.getName(), s.getStatus(), s.getOutput(), s.getSince())));
        return c;
    }

    private static TaskEvent sharedOrCopy(TaskEvent e, List<TaskEvent> known) {
        if (e == null) {
            return null;
        }
        for (TaskEvent k : known) {
            if (e.equals(k)) {
                return k;
            }
        }
        return copy(e);
    }

    static TaskEvent copy(TaskEvent e) {
        TaskEvent c = new TaskEvent();
        c.setType(e.getType());
        c.setTime(e.getTime());
        c.setMessage(e.getMessage());
        c.setExitCode(e.getExitCode());
        c.setSignal(e.getSignal());
        c.setOomKilled(e.getOomKilled());
        c.setStartDelay(e.getStartDelay());
        c.setRestartReason(e.getRestartReason());
        c.setKillTimeout(e.getKillTimeout());
        c.setKillError(e.getKillError());
        c.setFailedSibling(e.getFailedSibling());
        c.setValidationError(e.getValidationError());
        c.setDriverError(e.getDriverError());
        c.setCheck(e.getCheck());
        c.setCheckStatus(e.getCheckStatus());
        return c;
    }

    /** Null stays null (it serializes differently from an empty list); the copy cannot be changed. */
    private static <T> List<T> copyEach(List<T> list, java.util.function.UnaryOperator<T> copy) {
        if (list == null) {
            return null;
        }
        List<T> c = new ArrayList<>(list.size());
        for (T t : list) {
            c.add(copy.apply(t));
        }
        return Collections.unmodifiableList(c);
    }
}
