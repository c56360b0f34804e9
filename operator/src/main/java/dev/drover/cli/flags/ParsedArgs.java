package dev.drover.cli.flags;

import java.util.List;
import java.util.Map;

/**
 * A command line read against a flag table: each flag given (by its {@code --name}) with its values in order, the
 * positional arguments, and what followed {@code --} where the command takes a command line of its own.
 */
public record ParsedArgs(
        Map<String, List<String>> flags, List<String> positional, List<String> rest, boolean dashDash, boolean help) {

    public ParsedArgs {
        flags = Map.copyOf(flags);
        positional = List.copyOf(positional);
        rest = List.copyOf(rest);
    }

    /** Whether {@code name} was given. */
    public boolean has(String name) {
        return flags.containsKey(name);
    }

    /** The value of {@code name}, the last one where it was given more than once; null when not given. */
    public String value(String name) {
        List<String> values = flags.get(name);
        return values == null ? null : values.getLast();
    }

    /** Every value given to {@code name}, in order. */
    public List<String> values(String name) {
        return flags.getOrDefault(name, List.of());
    }
}
