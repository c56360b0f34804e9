package dev.drover.api;

import java.util.Locale;
import java.util.Map;

/** POSIX signal names and their Linux numbers. */
public final class Signals {

    private static final Map<String, Integer> NUMBERS = Map.ofEntries(
            Map.entry("SIGHUP", 1),
            Map.entry("SIGINT", 2),
            Map.entry("SIGQUIT", 3),
            Map.entry("SIGILL", 4),
            Map.entry("SIGTRAP", 5),
            Map.entry("SIGABRT", 6),
            Map.entry("SIGBUS", 7),
            Map.entry("SIGFPE", 8),
            Map.entry("SIGKILL", 9),
            Map.entry("SIGUSR1", 10),
            Map.entry("SIGSEGV", 11),
            Map.entry("SIGUSR2", 12),
            Map.entry("SIGPIPE", 13),
            Map.entry("SIGALRM", 14),
            Map.entry("SIGTERM", 15),
            Map.entry("SIGCHLD", 17),
            Map.entry("SIGCONT", 18),
            Map.entry("SIGSTOP", 19),
            Map.entry("SIGTSTP", 20),
            Map.entry("SIGTTIN", 21),
            Map.entry("SIGTTOU", 22),
            Map.entry("SIGURG", 23),
            Map.entry("SIGXCPU", 24),
            Map.entry("SIGXFSZ", 25),
            Map.entry("SIGVTALRM", 26),
            Map.entry("SIGPROF", 27),
            Map.entry("SIGWINCH", 28),
            Map.entry("SIGIO", 29),
            Map.entry("SIGPWR", 30),
            Map.entry("SIGSYS", 31));

    private Signals() {}

    /** {@code TERM} or {@code SIGTERM} (any case) as {@code SIGTERM}; throws for an unknown name. */
    public static String canonical(String name) {
        String upper = name.toUpperCase(Locale.ROOT);
        String full = upper.startsWith("SIG") ? upper : "SIG" + upper;
        if (!NUMBERS.containsKey(full)) {
            throw new IllegalArgumentException("unknown signal \"" + name + "\" (e.g. SIGTERM, SIGINT, SIGHUP)");
        }
        return full;
    }

    /** Whether {@code name} names a signal, as {@link #canonical} accepts it. */
    public static boolean isKnown(String name) {
        String upper = name.toUpperCase(Locale.ROOT);
        return NUMBERS.containsKey(upper.startsWith("SIG") ? upper : "SIG" + upper);
    }

    public static int number(String name) {
        return NUMBERS.get(canonical(name));
    }

    /** The name of signal {@code n}, or {@code SIG<n>} when it has none. */
    public static String name(int n) {
        return NUMBERS.entrySet().stream()
                .filter(e -> e.getValue() == n)
                .map(Map.Entry::getKey)
                .findFirst()
                .orElse("SIG" + n);
    }
}
