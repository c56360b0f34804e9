package dev.drover.api;

import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * Times in status are RFC 3339 strings in UTC, as Kubernetes writes them, with
 * sub-second digits when there are any (task starts and exits are often
 * milliseconds apart, and ordering them is the point).
 */
public final class Timestamps {

    private Timestamps() {}

    public static String format(Instant t) {
        return t.toString();
    }

    /** Parses an RFC 3339 time; throws {@link IllegalArgumentException} naming the value. */
    public static Instant parse(String text) {
        try {
            return java.time.OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("\"" + text + "\" is not an RFC 3339 time", e);
        }
    }
}
