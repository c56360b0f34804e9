package dev.drover.cli.flags;

import java.util.Objects;

/**
 * One flag of a command line: {@code --name}, an optional one-letter form {@code -x}, the placeholder of its value
 * (null: the flag takes none) and one line of help. The help line is what {@code --help} shows for it, so every flag a
 * command accepts is listed there.
 */
public record Flag(String name, String letter, String value, String help) {

    public Flag {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(help, "help");
        if (!name.startsWith("--") || name.length() < 3) {
            throw new IllegalArgumentException("a flag's name starts with --: " + name);
        }
        if (letter != null && (letter.length() != 2 || letter.charAt(0) != '-')) {
            throw new IllegalArgumentException("a flag's letter is -x: " + letter);
        }
        if (help.isBlank() || help.contains("\n")) {
            throw new IllegalArgumentException("a flag's help is one line: " + name);
        }
    }

    /** A flag that takes no value, such as {@code --follow}. */
    public static Flag on(String name, String letter, String help) {
        return new Flag(name, letter, null, help);
    }

    /** A flag with a value, such as {@code --tail N}. */
    public static Flag valued(String name, String letter, String value, String help) {
        return new Flag(name, letter, Objects.requireNonNull(value, "value"), help);
    }

    public boolean takesValue() {
        return value != null;
    }

    /** How help shows it: {@code -f, --follow} or {@code     --tail N}. */
    public String synopsis() {
        return (letter == null ? "    " : letter + ", ") + name + (value == null ? "" : " " + value);
    }
}
