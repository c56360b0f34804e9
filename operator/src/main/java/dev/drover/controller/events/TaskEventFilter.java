package dev.drover.controller.events;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * How task events become Kubernetes Events on their Allocation (the agent's {@code events.taskEvents}). The task's
 * status keeps every one of them whatever this says, and every Warning is an Event at once under each but none.
 */
public enum TaskEventFilter {
    /**
     * Every Warning an Event at once; the Normal task events of one allocation that come close together one Event
     * ({@link EventFolds}), so {@code kubectl describe alloc} shows when it started and ended and every Warning for a
     * fraction of the API writes of {@link #ALL}: the default, as docs/allocations.md#status promises.
     */
    FOLDED,
    /** Every task event its own Event: an Event each is most of the API writes an allocation costs. */
    ALL,
    /** Warnings only: a failure, an exit that is not 0 or a signal, a check that is not passing. */
    NOTABLE;

    /** The filter's name in the configuration: {@code folded}, {@code all}, {@code notable}. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The names {@link #parse} takes. */
    public static List<String> keys() {
        return Arrays.stream(values()).map(TaskEventFilter::key).toList();
    }

    /** The filter named {@code key} ({@code folded}, {@code all} or {@code notable}). */
    public static TaskEventFilter parse(String key) {
        for (TaskEventFilter f : values()) {
            if (f.key().equals(key)) {
                return f;
            }
        }
        throw new IllegalArgumentException("not one of " + keys());
    }

    /** Whether a task event, a Warning or not, becomes (part of) a Kubernetes Event. */
    boolean records(boolean warning) {
        return this != NOTABLE || warning;
    }
}
