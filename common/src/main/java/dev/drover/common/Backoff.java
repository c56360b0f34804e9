package dev.drover.common;

import java.time.Duration;
import java.util.Objects;

/**
 * The pause before the next retry: {@code min} at first, doubled after each failure up to {@code max}, and
 * {@code min} again once a try succeeds. A value: a loop keeps {@code pause = pause.next()}.
 *
 * @param current the pause to wait now
 */
public record Backoff(Duration min, Duration max, Duration current) {

    public Backoff {
        Objects.requireNonNull(min, "min");
        Objects.requireNonNull(max, "max");
        Objects.requireNonNull(current, "current");
        if (!min.isPositive()) {
            // a zero pause doubles to zero: the retry loop would spin
            throw new IllegalArgumentException("back-off must start above zero, not " + (min.isNegative() ? "-" : "")
                    + Durations.format(min.abs()));
        }
        if (max.compareTo(min) < 0 || current.compareTo(min) < 0 || current.compareTo(max) > 0) {
            throw new IllegalArgumentException("back-off " + current + " is not within " + min + " to " + max);
        }
    }

    /** A back-off that waits {@code min} first. */
    public static Backoff from(Duration min, Duration max) {
        return new Backoff(min, max, min);
    }

    /** After another failure: twice the pause, at most {@code max} (compared first, so it never overflows). */
    public Backoff next() {
        return new Backoff(min, max, current.compareTo(max.dividedBy(2)) > 0 ? max : current.multipliedBy(2));
    }

    /** After a success: the first pause again. */
    public Backoff reset() {
        return current.equals(min) ? this : from(min, max);
    }
}
