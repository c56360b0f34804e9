package dev.drover.controller.events;

import dev.drover.api.v1alpha1.Allocation;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;

/**
 * The names {@link EventRecorder} gives its Events and the keys of its series, from an Event's owner, reason, message
 * and the time it first happened.
 */
final class EventNames {

    private EventNames() {}

    /** What tells one series from another: the same allocation, reason and message for the same incarnation. */
    static String seriesKey(Allocation owner, String reason, String message, String incarnation) {
        return HexFormat.of().formatHex(digest(owner, reason, message, incarnation), 0, 16);
    }

    /**
     * {@code <allocation>.<16 hex digits of the time in nanoseconds><8 hex digits of the series>}: names of one
     * allocation sort as their times do (to 2262), and two series of one instant differ.
     */
    static String eventName(Allocation owner, String reason, String message, Instant time, String incarnation) {
        String base = owner.getMetadata().getName();
        if (base.length() > 228) {
            // cut, and no '-' or '.' left at the end: "x-.hash" is no name a real API server takes
            base = base.substring(0, 228).replaceFirst("[-.]+$", "");
        }
        long nanos = Math.max(0, time.getEpochSecond() * 1_000_000_000L + time.getNano());
        return base + "." + HexFormat.of().toHexDigits(nanos)
                + HexFormat.of().formatHex(digest(owner, reason, message, incarnation), 0, 4);
    }

    private static byte[] digest(Allocation owner, String reason, String message, String incarnation) {
        String key = incarnation + "\n" + owner.getMetadata().getUid() + "\n" + reason + "\n" + message;
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
