package dev.drover.cli;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;

/** The order {@code kubectl drover status} lists task events and Kubernetes Events in. */
final class NewestFirst {

    private static final Comparator<Instant> NEWEST_FIRST_UNKNOWN_LAST =
            Comparator.nullsLast(Comparator.<Instant>reverseOrder());

    private NewestFirst() {}

    /** Newest first, those without a time last; of equal times the later in {@code items} first. */
    static <T> List<T> sort(List<T> items, Function<T, Instant> time) {
        List<T> sorted = new ArrayList<>(items.reversed());
        sorted.sort(Comparator.comparing(time, NEWEST_FIRST_UNKNOWN_LAST));
        return sorted;
    }
}
