package dev.drover.driver;

import dev.drover.common.UserText;
import java.util.List;
import java.util.Objects;

/**
 * A command to run inside a running task ({@code kubectl drover exec}, an exec check): in the task's confinement
 * (its user, directory and environment; for a confined driver also its namespaces and cgroup).
 *
 * @param command the program and its arguments; the program is looked up on the task's {@code PATH}
 * @param stdin whether the caller sends input; without it the command's standard input is at its end from the start
 * @param tty whether the command runs on a terminal of its own: its output and errors then both come on {@link
 *     ExecProcess#stdout()}, and {@link ExecProcess#resize} sets the terminal's size
 */
public record ExecRequest(List<String> command, boolean stdin, boolean tty) {

    /** The most words a command may have. */
    public static final int MAX_WORDS = 256;
    /** The most characters of all words together: room for the longest exec check (4 KiB and 64 arguments of 4 KiB). */
    public static final int MAX_CHARACTERS = 512 * 1024;

    public ExecRequest {
        Objects.requireNonNull(command, "command");
        command = List.copyOf(command);
        if (command.isEmpty() || command.getFirst().isEmpty()) {
            throw new IllegalArgumentException("a command to run is needed");
        }
        if (command.size() > MAX_WORDS) {
            throw new IllegalArgumentException("the command has " + command.size() + " words, more than " + MAX_WORDS);
        }
        long characters = command.stream().mapToLong(String::length).sum();
        if (characters > MAX_CHARACTERS) {
            throw new IllegalArgumentException(
                    "the command has " + characters + " characters, more than " + MAX_CHARACTERS);
        }
        if (command.stream().anyMatch(w -> w.indexOf('\0') >= 0)) {
            throw new IllegalArgumentException("the command " + UserText.quote(command.getFirst())
                    + " holds a NUL character, which no program can be given");
        }
    }

    /** The program's name, cut and quoted for a message or an event; never the arguments, which may hold secrets. */
    public String describe() {
        return UserText.quote(command.getFirst());
    }
}
