package dev.drover.deviceplugin;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Time for plugins: what time it is, and timed waits that tests can drive (a manual clock wakes waiters when
 * it is advanced, so no test waits in real time for a health period to pass).
 */
public interface PluginClock {

    Instant now();

    /**
     * Called with {@code lock} held: waits on {@code condition} until it is signalled or this clock may have
     * reached {@code deadline}. May return early; callers re-check their own state and the time in a loop.
     */
    void await(ReentrantLock lock, Condition condition, Instant deadline) throws InterruptedException;

    /** The wall clock; timed waits are ordinary timed condition waits. */
    static PluginClock system() {
        return SystemClock.INSTANCE;
    }

    /** The wall clock. */
    enum SystemClock implements PluginClock {
        INSTANCE;

        @Override
        public Instant now() {
            return Instant.now();
        }

        @Override
        public void await(ReentrantLock lock, Condition condition, Instant deadline) throws InterruptedException {
            Duration left = Duration.between(Instant.now(), deadline);
            if (left.isNegative() || left.isZero()) {
                return;
            }
            long nanos = left.compareTo(Duration.ofDays(1)) > 0 ? TimeUnit.DAYS.toNanos(1) : left.toNanos();
            condition.awaitNanos(nanos);
        }
    }
}
