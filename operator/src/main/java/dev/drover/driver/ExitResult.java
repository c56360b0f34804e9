package dev.drover.driver;

import dev.drover.api.Signals;

/**
 * How a task ended: by {@code exit(exitCode)} with no signal, or by a signal with {@code exitCode} 128 + its number
 * (as shells and Nomad report it). So exit 130 and SIGINT share an exit code and differ in {@code signal}.
 *
 * @param signal    the name of the signal that ended it ({@code SIGTERM}), or null
 * @param error     why the driver lost the task, or null
 * @param oomKilled whether the kernel's OOM killer ended it (its cgroup counted an OOM kill while it ran)
 */
public record ExitResult(int exitCode, String signal, String error, boolean oomKilled) {

    public ExitResult(int exitCode, String signal, String error) {
        this(exitCode, signal, error, false);
    }

    public static ExitResult code(int exitCode) {
        return new ExitResult(exitCode, null, null);
    }

    /** Ended by a signal; the exit code is 128 + its number, as shells report it. */
    public static ExitResult signalled(String signal) {
        return new ExitResult(128 + Signals.number(signal), signal, null);
    }

    /** Ended by signal {@code number}, which may have no name ({@code SIG34}). */
    public static ExitResult signalled(int number) {
        return new ExitResult(128 + number, Signals.name(number), null);
    }

    /** The same end, told as an out-of-memory kill. */
    public ExitResult withOomKilled() {
        return new ExitResult(exitCode, signal, error, true);
    }

    public boolean successful() {
        return exitCode == 0 && signal == null && error == null && !oomKilled;
    }
}
