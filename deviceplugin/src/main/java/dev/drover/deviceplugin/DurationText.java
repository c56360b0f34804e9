package dev.drover.deviceplugin;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as people write them in configuration: {@code 500ms}, {@code 10s}, {@code 1m30s}, {@code 2h}, or ISO {@code PT10S}. */
public final class DurationText {

    private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h)");

    private DurationText() {
    }

    /** @throws IllegalArgumentException when the text is not a duration */
    public static Duration parse(String text) {
        String t = text.strip();
        if (t.startsWith("P") || t.startsWith("p")) {
            try {
                return Duration.parse(t);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("'" + text + "' is not a duration (e.g. 500ms, 10s, 1m30s, PT10S)");
            }
        }
        Matcher m = PART.matcher(t);
        Duration total = Duration.ZERO;
        int end = 0;
        while (m.find() && m.start() == end) {
            long n = Long.parseLong(m.group(1));
            total = total.plus(switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofHours(n);
            });
            end = m.end();
        }
        if (end == 0 || end != t.length()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration (e.g. 500ms, 10s, 1m30s, PT10S)");
        }
        return total;
    }
}
