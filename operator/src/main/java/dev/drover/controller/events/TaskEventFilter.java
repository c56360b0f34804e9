package dev.drover.controller.events;

import dev.drover.api.v1alpha1.TaskEventType;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which task events also become Kubernetes Events on their Allocation (the agent's {@code events.taskEvents}). The
 * task's status keeps every one of them whatever this says.
 */
public enum TaskEventFilter {
    /**
     * Every task event, so {@code kubectl describe alloc} shows the whole history: the default, as
     * docs/allocations.md#status promises.
     */
    ALL,
    /**
     * Every one but the Normal {@link #ROUTINE} events that every task has on an ordinary start and stop: an Event each
     * is most of the API writes an allocation costs (docs/BENCHMARKS.md). Every Warning is still an Event.
     */
    NOTABLE;

    /** Normal task events of an ordinary life: received, its directory built, started, killed when it stops. */
    static final Set<TaskEventType> ROUTINE = Set.of(
            TaskEventType.Received,
            TaskEventType.TaskSetup,
            TaskEventType.Started,
            TaskEventType.Killing,
            TaskEventType.Killed);

    /** The filter's name in the configuration: {@code all}, {@code notable}. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The names {@link #parse} takes. */
    public static List<String> keys() {
        return Arrays.stream(values()).map(TaskEventFilter::key).toList();
    }

    /** The filter named {@code key} ({@code all} or {@code notable}). */
    public static TaskEventFilter parse(String key) {
        for (TaskEventFilter f : values()) {
            if (f.key().equals(key)) {
                return f;
            }
        }
        throw new IllegalArgumentException("not one of " + keys());
    }

    /** Whether a task event of {@code type}, a Warning or not, becomes a Kubernetes Event. */
    boolean records(TaskEventType type, boolean warning) {
        return this == ALL || warning || !ROUTINE.contains(type);
    }
}
