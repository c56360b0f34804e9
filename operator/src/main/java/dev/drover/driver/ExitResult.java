package dev.drover.driver;

import dev.drover.api.Signals;

/**
 * How a task ended.
 *
 * @param signal the name of the signal that ended it ({@code SIGTERM}), or null
 * @param error  why the driver lost the task, or null
 */
public record ExitResult(int exitCode, String signal, String error) {

    public static ExitResult code(int exitCode) {
        return new ExitResult(exitCode, null, null);
    }

    /** Ended by a signal; the exit code is 128 + its number, as shells report it. */
    public static ExitResult signalled(String signal) {
        return new ExitResult(128 + Signals.number(signal), signal, null);
    }

    public boolean successful() {
        return exitCode == 0 && signal == null && error == null;
    }
}
