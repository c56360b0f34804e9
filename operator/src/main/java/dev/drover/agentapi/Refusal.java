package dev.drover.agentapi;

import java.time.Duration;

/**
 * A request turned away with an HTTP status and a message for its caller; {@code retryAfter} is zero unless the caller
 * may retry after it. Each server writes it in its own error format.
 */
public final class Refusal extends Exception {

    private final int status;
    private final Duration retryAfter;

    public Refusal(int status, String message, Duration retryAfter) {
        super(message, null, false, false);
        this.status = status;
        this.retryAfter = retryAfter;
    }

    public Refusal(int status, String message) {
        this(status, message, Duration.ZERO);
    }

    public int status() {
        return status;
    }

    public Duration retryAfter() {
        return retryAfter;
    }
}
