package dev.drover.taskrunner.checks;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How much later than its {@code initialDelay} a check is first probed, so that the checks of many tasks that start
 * together (all of an agent's, after it restarts) are not probed in the same instant every interval after.
 */
@FunctionalInterface
interface Jitter {

    /** The share of the interval a first probe may be put off by. */
    double MAX_SHARE = 0.1;

    /** No jitter: each check first at its {@code initialDelay}. */
    Jitter NONE = interval -> Duration.ZERO;

    /** The delay of the next check to begin, whose interval is {@code interval}: from zero to a tenth of it. */
    Duration delay(Duration interval);

    /**
     * Deterministic and evenly spread: the k-th check begun is put off by the fractional part of k times the golden
     * ratio's inverse, of a tenth of its interval. Any run of consecutive checks covers that tenth nearly evenly, with
     * no randomness to make a test or a trace differ from run to run.
     */
    static Jitter spread() {
        AtomicLong count = new AtomicLong();
        return interval -> {
            double share = (count.getAndIncrement() * 0.6180339887498949) % 1.0;
            return Duration.ofNanos((long) (interval.toNanos() * MAX_SHARE * share));
        };
    }
}
