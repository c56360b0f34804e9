package dev.drover.taskrunner;

import dev.drover.driver.TaskHandle;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
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
        return new TaskHandle(driver, taskId, instant(startedAt), state);
    }

    /**
     * {@code s} read as {@link Instant#parse} reads it: the form {@link Instant#toString} writes (a four-digit year,
     * UTC, a fraction of 0 to 9 digits) without a formatter, which is most of a handle's reading at a restore of
     * thousands of tasks; anything else by {@link Instant#parse}, so it fails as that does.
     */
    static Instant instant(String s) {
        int n = s.length();
        if (n >= 20
                && n <= 30
                && n != 21
                && s.charAt(4) == '-'
                && s.charAt(7) == '-'
                && s.charAt(10) == 'T'
                && s.charAt(13) == ':'
                && s.charAt(16) == ':'
                && s.charAt(n - 1) == 'Z'
                && (n == 20 || s.charAt(19) == '.')) {
            int[] f = {
                digits(s, 0, 4),
                digits(s, 5, 7),
                digits(s, 8, 10),
                digits(s, 11, 13),
                digits(s, 14, 16),
                digits(s, 17, 19)
            };
            int fraction = n == 20 ? 0 : digits(s, 20, n - 1);
            if (Arrays.stream(f).allMatch(v -> v >= 0) && fraction >= 0) {
                int nanos = fraction;
                for (int i = n - 21; i < 9; i++) {
                    nanos *= 10;
                }
                try {
                    return LocalDateTime.of(f[0], f[1], f[2], f[3], f[4], f[5], n == 20 ? 0 : nanos)
                            .toInstant(ZoneOffset.UTC);
                } catch (DateTimeException outOfRange) {
                    // a leap second, an hour 24: Instant.parse reads or refuses it
                }
            }
        }
        return Instant.parse(s);
    }

    /** The decimal number in {@code s} from {@code from} to {@code to}; -1 when a character there is no digit. */
    private static int digits(String s, int from, int to) {
        int v = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }
}
