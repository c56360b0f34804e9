package dev.drover.cli;

/** A failure of a {@code kubectl drover} command to explain to the user in one line; exit code 1. */
final class CommandFailure extends Exception {

    private final int httpCode;

    CommandFailure(String message) {
        this(message, 0);
    }

    /** A refusal: {@code httpCode} is the status the API server (or the gateway behind it) answered with. */
    CommandFailure(String message, int httpCode) {
        super(message);
        this.httpCode = httpCode;
    }

    /** The HTTP status of a refusal; 0 when the failure was not one. */
    int httpCode() {
        return httpCode;
    }
}
