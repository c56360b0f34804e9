package dev.drover.logging;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Lets one line through per key and interval, for failures that can repeat on
 * every write (a full disk fails each of them): the log says it once, then how
 * many alike it held back, instead of a line per write. Thread-safe.
 *
 * <pre>
 *   throttle.log("state-write", suppressed -> LOG.warn("... ({} similar lines suppressed)", suppressed));
 * </pre>
 */
public final class LogThrottle {

    /** What the next line of a key may say: how many of its lines were held back since the last one. */
    @FunctionalInterface
    public interface Line {
        void write(long suppressed);
    }

    /** Bounds the keys kept: a throttle keyed by something hostile must not grow without end. */
    private static final int MAX_KEYS = 1024;

    private final long intervalNanos;
    private final LongSupplier nanoTime;
    private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

    public LogThrottle(Duration interval) {
        this(interval, System::nanoTime);
    }

    /** @param nanoTime the clock, as {@link System#nanoTime} reads (tests pass their own) */
    public LogThrottle(Duration interval, LongSupplier nanoTime) {
        this.intervalNanos = interval.toNanos();
        this.nanoTime = nanoTime;
    }

    /** Writes {@code line} if no line of {@code key} was written within the interval; else counts it. */
    public void log(String key, Line line) {
        if (windows.size() >= MAX_KEYS && !windows.containsKey(key)) {
            windows.clear(); // the oldest windows lose their count, never a line
        }
        long now = nanoTime.getAsLong();
        long[] suppressed = {-1};
        windows.compute(key, (k, w) -> {
            if (w == null || now - w.since() >= intervalNanos) {
                suppressed[0] = w == null ? 0 : w.suppressed();
                return new Window(now, 0);
            }
            return new Window(w.since(), w.suppressed() + 1);
        });
        if (suppressed[0] >= 0) {
            line.write(suppressed[0]);
        }
    }

    private record Window(long since, long suppressed) {}
}
