package dev.drover.driver;

import java.time.Instant;
import java.util.Map;

/**
 * A started task as its driver identifies it. The state store persists it, so
 * it holds only JSON-friendly values, and a later agent process hands it back
 * to {@link Driver#recover}.
 *
 * @param state driver-specific facts as strings (a PID and its start time, a deadline...)
 */
public record TaskHandle(String driver, String taskId, Instant startedAt, Map<String, String> state) {

    public TaskHandle {
        state = Map.copyOf(state);
    }

    /** A number kept in {@code state}, or {@code fallback} when absent. */
    public long longState(String key, long fallback) {
        String v = state.get(key);
        return v == null ? fallback : Long.parseLong(v);
    }
}
