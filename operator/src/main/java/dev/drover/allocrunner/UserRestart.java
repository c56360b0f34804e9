package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.common.UserText;
import dev.drover.state.AllocRunnerState;
import dev.drover.state.StoredAllocation;
import dev.drover.taskrunner.TaskRunner;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A restart its user asks for with the annotation {@code drover.dev/restartedAt} (what {@code kubectl drover
 * restart} sets): each new value restarts the running tasks once, as a changed definition does ({@code
 * RestartSignaled}, not counted against the restart policy). A value {@code TASK@WHEN} restarts task {@code TASK}
 * only; any other value (a time, by custom) restarts every running task. The value an allocation has when the
 * agent takes it on is not a request, and the value acted on last is stored with the runner's state, so an agent
 * that restarts does not act on it again.
 */
public final class UserRestart {

    public static final String ANNOTATION = "drover.dev/restartedAt";
    /**
     * Who asked ({@code kubectl drover restart} sets it to the caller's name); the chart's admission policy lets a
     * user set it only to their own name, so the {@code RestartSignaled} event names the user truly.
     */
    public static final String BY_ANNOTATION = "drover.dev/restartedBy";

    /** The longest value taken: a task name, {@code @}, and a timestamp fit with room to spare. */
    public static final int MAX_LENGTH = 256;
    /** The {@code restartReason} of the {@code RestartSignaled} event. */
    public static final String REASON = "User requested restart";
    /** The reason of the Warning Event for a value not acted on. */
    static final String REFUSED = "RestartNotDone";

    private UserRestart() {}

    /** The annotation's value on {@code a}; {@code ""} when it has none. */
    public static String valueOf(Allocation a) {
        return annotation(a, ANNOTATION);
    }

    /**
     * The {@code restartReason} of the restart {@code a}'s annotations ask for: {@link #REASON}, and who asked when
     * {@link #BY_ANNOTATION} says so (quoted, and cut when long: it is what a user wrote).
     */
    static String reason(Allocation a) {
        String by = annotation(a, BY_ANNOTATION);
        return by.isEmpty() ? REASON : REASON + " by " + UserText.quote(by);
    }

    private static String annotation(Allocation a, String name) {
        Map<String, String> annotations =
                a.getMetadata() == null ? null : a.getMetadata().getAnnotations();
        String value = annotations == null ? null : annotations.get(name);
        return value == null ? "" : value;
    }

    /** The value a restored runner acted on last; with a store from before it was kept, the value first seen. */
    static String actedOn(StoredAllocation stored, Allocation spec) {
        return stored.state().map(AllocRunnerState::restartedAt).orElseGet(() -> valueOf(spec));
    }

    /**
     * Restarts what a new {@code value} asks for among {@code tasks}, saying {@code reason} ({@link #reason}). Returns why nothing was restarted (to be told
     * as a warning), or empty when a task was.
     */
    static Optional<String> act(String value, String reason, Map<String, TaskRunner> tasks) {
        if (value.length() > MAX_LENGTH) {
            return Optional.of("annotation " + ANNOTATION + " is " + value.length() + " characters long, more than "
                    + MAX_LENGTH + ": nothing restarted; set a shorter value, e.g. the time (or TASK@time)");
        }
        if (value.chars().anyMatch(Character::isISOControl)) {
            return Optional.of("annotation " + ANNOTATION + " " + UserText.quote(value)
                    + " holds control characters: nothing restarted; set a time (or TASK@time)");
        }
        int at = value.indexOf('@');
        String task = at < 0 ? null : value.substring(0, at);
        if (task != null && !tasks.containsKey(task)) {
            return Optional.of(
                    "annotation " + ANNOTATION + " " + UserText.quote(value) + " names task " + UserText.quote(task)
                            + ", which the allocation does not have (" + String.join(", ", tasks.keySet())
                            + "): nothing restarted");
        }
        List<String> restarted = new ArrayList<>();
        for (TaskRunner r : task == null ? tasks.values() : List.of(tasks.get(task))) {
            if (r.state().getState() == TaskState.State.Running) {
                r.restart(reason);
                restarted.add(r.name());
            }
        }
        if (restarted.isEmpty()) {
            return Optional.of("annotation " + ANNOTATION + " " + UserText.quote(value) + ": "
                    + (task == null ? "no task is running" : "task " + task + " is not running")
                    + "; nothing restarted");
        }
        return Optional.empty();
    }
}
