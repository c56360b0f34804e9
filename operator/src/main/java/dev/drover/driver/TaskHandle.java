package dev.drover.driver;

import java.time.Instant;
import java.util.Map;

/**
 * A started task as its driver identifies it. The state store persists it, so
 * it holds only JSON-friendly values, and a later agent process hands it back
 * to {@link Driver#recover}.
 *
 * @param state driver-specific facts (a PID and its start time, a deadline...)
 */
public record TaskHandle(String driver, String taskId, Instant startedAt, Map<String, Object> state) {

    public TaskHandle {
        state = Map.copyOf(state);
    }

    public long longState(String key) {
        return ((Number) state.get(key)).longValue();
    }
}
