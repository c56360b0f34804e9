package dev.drover.taskrunner;

import dev.drover.driver.TaskHandle;
import java.util.HashMap;
import java.util.Map;

/** Driver handles as the state store keeps them: a flat map of strings. */
public final class StoredHandles {

    private StoredHandles() {}

    static Map<String, String> toStored(TaskHandle h) {
        Map<String, String> m = new HashMap<>(h.state());
        m.put("@driver", h.driver());
        m.put("@taskId", h.taskId());
        m.put("@startedAt", h.startedAt().toString());
        return m;
    }

    /** The handle a stored map holds; IllegalArgumentException or NullPointerException when it holds none whole. */
    public static TaskHandle fromStored(Map<String, String> m) {
        Map<String, String> state = new HashMap<>(m);
        String driver = state.remove("@driver");
        String taskId = state.remove("@taskId");
        String startedAt = state.remove("@startedAt");
        return new TaskHandle(driver, taskId, java.time.Instant.parse(startedAt), state);
    }
}
