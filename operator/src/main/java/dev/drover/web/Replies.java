package dev.drover.web;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.time.Duration;

/** Whole answers of a known length, as the agent's API and the gateway send their documents and errors. */
public final class Replies {

    private Replies() {}

    /** Answers {@code status} with {@code body} as {@code contentType}. */
    public static void send(HttpExchange ex, int status, String contentType, byte[] body) throws IOException {
        send(ex, status, contentType, body, Duration.ZERO);
    }

    /** As {@link #send(HttpExchange, int, String, byte[])}; {@code retryAfter}, unless zero, in whole seconds. */
    public static void send(HttpExchange ex, int status, String contentType, byte[] body, Duration retryAfter)
            throws IOException {
        if (!retryAfter.isZero()) {
            ex.getResponseHeaders().set("Retry-After", Long.toString(Math.max(1, retryAfter.toSeconds())));
        }
        ex.getResponseHeaders().set("Content-Type", contentType);
        ex.sendResponseHeaders(status, body.length);
        ex.getResponseBody().write(body);
    }
}
