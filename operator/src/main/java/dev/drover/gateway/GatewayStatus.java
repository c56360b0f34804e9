package dev.drover.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.web.Exchange;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The gateway's errors as the Kubernetes API server writes its own: a {@code Status} object ({@code kind}, {@code
 * code}, {@code reason}, {@code message}), which kubectl shows as it shows any API error. Text a caller or an agent
 * chose is {@link #cut} before it goes into a message.
 */
final class GatewayStatus {

    static final ObjectMapper JSON = new ObjectMapper();
    /** Longest piece of someone else's text quoted in a message. */
    static final int QUOTED = 128;

    private GatewayStatus() {}

    /** The {@code reason} Kubernetes gives an HTTP status. */
    static String reason(int code) {
        return switch (code) {
            case 400 -> "BadRequest";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "NotFound";
            case 405 -> "MethodNotAllowed";
            case 406 -> "NotAcceptable";
            case 409 -> "Conflict";
            case 429 -> "TooManyRequests";
            case 503 -> "ServiceUnavailable";
            case 504 -> "Timeout";
            default -> "InternalError";
        };
    }

    static byte[] body(int code, String message) {
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("kind", "Status");
        status.put("apiVersion", "v1");
        status.put("metadata", Map.of());
        status.put("status", "Failure");
        status.put("message", message);
        status.put("reason", reason(code));
        status.put("code", code);
        try {
            return JSON.writeValueAsBytes(status);
        } catch (IOException e) {
            throw new IllegalStateException("a map of strings always serializes", e);
        }
    }

    static void send(Exchange ex, int code, String message) throws IOException {
        send(ex, code, message, Duration.ZERO);
    }

    /** {@code retryAfter}, when not zero, goes out as {@code Retry-After} in whole seconds. */
    static void send(Exchange ex, int code, String message, Duration retryAfter) throws IOException {
        ex.send(code, "application/json", body(code, message), retryAfter);
    }

    /** {@code s} at most {@link #QUOTED} characters, control characters as {@code ?}, fit to quote in a message. */
    static String cut(String s) {
        return cut(s, QUOTED);
    }

    static String cut(String s, int max) {
        if (s == null) {
            return "";
        }
        String shown = s.length() > max ? s.substring(0, max) + "..." : s;
        StringBuilder out = new StringBuilder(shown.length());
        shown.codePoints().forEach(c -> out.appendCodePoint(Character.isISOControl(c) ? '?' : c));
        return out.toString();
    }
}
