package dev.drover.podresources;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** A gRPC status as the trailers carry it: {@code grpc-status} (a code) and {@code grpc-message} (percent-encoded). */
final class GrpcStatus {

    private static final List<String> NAMES = List.of(
            "OK",
            "CANCELLED",
            "UNKNOWN",
            "INVALID_ARGUMENT",
            "DEADLINE_EXCEEDED",
            "NOT_FOUND",
            "ALREADY_EXISTS",
            "PERMISSION_DENIED",
            "RESOURCE_EXHAUSTED",
            "FAILED_PRECONDITION",
            "ABORTED",
            "OUT_OF_RANGE",
            "UNIMPLEMENTED",
            "INTERNAL",
            "UNAVAILABLE",
            "DATA_LOSS",
            "UNAUTHENTICATED");

    /** The most characters of the server's message a sentence shows. */
    static final int SHOWN = 200;

    private GrpcStatus() {}

    /** {@code 7 (PERMISSION_DENIED)}; an unknown or unreadable code as it came. */
    static String named(String code) {
        try {
            int c = Integer.parseInt(code.strip());
            return c >= 0 && c < NAMES.size() ? c + " (" + NAMES.get(c) + ")" : Integer.toString(c);
        } catch (NumberFormatException e) {
            return quoted(code);
        }
    }

    /** The message, percent-decoded (gRPC's encoding, where {@code +} is a plus), cut and with controls escaped. */
    static String message(String raw) {
        if (raw == null || raw.isEmpty()) {
            return "";
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < raw.length(); i++) {
            char ch = raw.charAt(i);
            if (ch == '%' && i + 2 < raw.length() && hex(raw.charAt(i + 1)) >= 0 && hex(raw.charAt(i + 2)) >= 0) {
                out.write(hex(raw.charAt(i + 1)) * 16 + hex(raw.charAt(i + 2)));
                i += 2;
            } else {
                out.writeBytes(String.valueOf(ch).getBytes(StandardCharsets.UTF_8));
            }
        }
        return quoted(out.toString(StandardCharsets.UTF_8));
    }

    private static int hex(char c) {
        return Character.digit(c, 16);
    }

    private static String quoted(String text) {
        StringBuilder b = new StringBuilder("\"");
        text.codePoints().limit(SHOWN).forEach(cp -> {
            if (cp < 0x20 || cp == 0x7f) {
                b.append(String.format("\\u%04x", cp));
            } else if (cp == '"' || cp == '\\') {
                b.append('\\').appendCodePoint(cp);
            } else {
                b.appendCodePoint(cp);
            }
        });
        return b.append(text.codePointCount(0, text.length()) > SHOWN ? "…\"" : "\"")
                .toString();
    }
}
