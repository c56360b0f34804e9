package dev.drover.cli.flags;

import dev.drover.common.UserText;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a command line against a table of {@link Flag}s, the way kubectl takes them: {@code --name VALUE} or
 * {@code --name=VALUE}, {@code -x VALUE}, letters of flags without values together ({@code -it}), flags before, after
 * and between the positional arguments, and {@code -h}/{@code --help} everywhere. One parser for every command of a
 * program, so what a command accepts is exactly what its help lists.
 */
public final class FlagParser {

    /** The flag every command takes. */
    public static final Flag HELP = Flag.on("--help", "-h", "prints this help");

    private FlagParser() {}

    /**
     * @param dashDash what a {@code --} does: true, everything after it is {@link ParsedArgs#rest()} (a command line
     *     of its own, as {@code exec ... -- COMMAND}); false, everything after it is positional
     * @throws UsageError for a flag not in {@code table}, a missing value, or a value given to a flag that takes none
     */
    public static ParsedArgs parse(List<Flag> table, List<String> args, boolean dashDash) throws UsageError {
        Map<String, List<String>> given = new LinkedHashMap<>();
        List<String> positional = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals("--")) {
                List<String> after = args.subList(i + 1, args.size());
                if (dashDash) {
                    return new ParsedArgs(given, positional, after, true, false);
                }
                positional.addAll(after);
                break;
            }
            if (arg.equals("-h") || arg.equals("--help")) {
                return new ParsedArgs(given, positional, List.of(), false, true);
            }
            if (!arg.startsWith("-") || arg.equals("-")) {
                positional.add(arg);
                continue;
            }
            if (arg.startsWith("--")) {
                int eq = arg.indexOf('=');
                String name = eq > 0 ? arg.substring(0, eq) : arg;
                Flag flag = byName(table, name);
                if (eq > 0) {
                    if (!flag.takesValue()) {
                        throw new UsageError(name + " takes no value, not " + UserText.quote(arg.substring(eq + 1)));
                    }
                    add(given, flag, arg.substring(eq + 1));
                } else {
                    i = take(given, flag, args, i);
                }
            } else if (arg.length() == 2) {
                i = take(given, byLetter(table, arg, arg), args, i);
            } else {
                // -it: letters of flags that take no value
                for (char c : arg.substring(1).toCharArray()) {
                    Flag flag = byLetter(table, "-" + c, arg);
                    if (flag.takesValue()) {
                        throw new UsageError(
                                "-" + c + " takes a value: give it apart (-" + c + " " + flag.value() + ")");
                    }
                    add(given, flag, "");
                }
            }
        }
        return new ParsedArgs(given, positional, List.of(), false, false);
    }

    /** Records {@code flag} at {@code args[i]}, with the next argument as its value if it takes one. */
    private static int take(Map<String, List<String>> given, Flag flag, List<String> args, int i) throws UsageError {
        if (!flag.takesValue()) {
            add(given, flag, "");
            return i;
        }
        if (i + 1 >= args.size()) {
            throw new UsageError(args.get(i) + " needs a value (" + args.get(i) + " " + flag.value() + ")");
        }
        add(given, flag, args.get(i + 1));
        return i + 1;
    }

    private static void add(Map<String, List<String>> given, Flag flag, String value) {
        given.computeIfAbsent(flag.name(), n -> new ArrayList<>()).add(value);
    }

    private static Flag byName(List<Flag> table, String name) throws UsageError {
        for (Flag f : table) {
            if (f.name().equals(name)) {
                return f;
            }
        }
        throw unknown(name);
    }

    private static Flag byLetter(List<Flag> table, String letter, String written) throws UsageError {
        for (Flag f : table) {
            if (letter.equals(f.letter())) {
                return f;
            }
        }
        if (!written.equals(letter)) {
            throw new UsageError(
                    "unknown flag " + UserText.quote(letter) + " (in " + UserText.quote(written) + ")", letter);
        }
        throw unknown(letter);
    }

    private static UsageError unknown(String flag) {
        return new UsageError("unknown flag " + UserText.quote(flag), flag);
    }
}
