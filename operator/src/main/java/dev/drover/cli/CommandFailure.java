package dev.drover.cli;

/** A failure of a {@code kubectl drover} command to explain to the user in one line; exit code 1. */
final class CommandFailure extends Exception {
    CommandFailure(String message) {
        super(message);
    }
}
