package dev.drover.cli.flags;

import java.util.List;
import java.util.Objects;

/**
 * A command of a program ({@code logs} of {@code kubectl drover}, {@code up} of {@code drover-local}): its name, the
 * arguments it takes as help writes them, one line saying what it does, and its own flags (a program's flags common
 * to all its commands are kept apart).
 */
public record Subcommand(String name, String args, String summary, List<Flag> flags) {

    public Subcommand {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(args, "args");
        if (summary == null || summary.isBlank() || summary.contains("\n")) {
            throw new IllegalArgumentException("a command's summary is one line: " + name);
        }
        flags = List.copyOf(flags);
    }

    /** {@code logs ALLOC TASK}: the command and its arguments. */
    public String synopsis() {
        return args.isEmpty() ? name : name + " " + args;
    }
}
