package dev.drover.cli.flags;

import java.util.List;
import java.util.function.Function;

/** The lines of a {@code --help}: one per command or flag, their names in a column and what they do beside it. */
public final class HelpText {

    /** Where the descriptions start; a longer name pushes its own line's description on. */
    private static final int COLUMN = 26;

    private HelpText() {}

    /** {@code   -f, --follow          follows the output...}, one line per flag. */
    public static String flags(List<Flag> flags) {
        return lines(flags, Flag::synopsis, Flag::help);
    }

    /** {@code   logs ALLOC TASK        a task's output...}, one line per command. */
    public static String commands(List<Subcommand> commands) {
        return lines(commands, Subcommand::synopsis, Subcommand::summary);
    }

    private static <T> String lines(List<T> items, Function<T, String> left, Function<T, String> right) {
        int width = Math.min(
                COLUMN,
                items.stream().mapToInt(i -> left.apply(i).length()).max().orElse(0));
        StringBuilder out = new StringBuilder();
        for (T item : items) {
            String name = left.apply(item);
            out.append("  ").append(name);
            out.append(" ".repeat(Math.max(2, COLUMN - name.length())));
            out.append(right.apply(item)).append('\n');
        }
        return out.toString();
    }
}
