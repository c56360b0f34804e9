package dev.drover.cli;

import dev.drover.cli.flags.Flag;
import dev.drover.cli.flags.FlagParser;
import dev.drover.cli.flags.ParsedArgs;
import dev.drover.cli.flags.Subcommand;
import dev.drover.cli.flags.UsageError;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code kubectl drover __complete WORD... PARTIAL}: the completions of the word being typed, as kubectl (1.26+) asks
 * a plugin's {@code kubectl_complete-drover} for them and as cobra prints them: one candidate a line, {@code
 * value<TAB>description} where a description helps, and last {@code :DIRECTIVE} (4: no file names; 0: the shell's
 * default, file names). Commands, flags and their fixed values come from {@link PluginCommandLine}'s table; allocation
 * and task names from the cluster, through {@link Names}, which says nothing when the cluster cannot answer: a TAB
 * never prints an error.
 */
final class Completion {

    /** cobra's ShellCompDirectiveNoFileComp. */
    static final int NO_FILES = 4;
    /** cobra's ShellCompDirectiveDefault: the shell completes file names. */
    static final int FILES = 0;

    /** Names only the cluster knows; each answers an empty list when it cannot say. */
    interface Names {
        /** The allocations of the namespace {@code flags} name (else the kubeconfig's), at most {@link #MAX_NAMES}. */
        List<String> allocations(ParsedArgs flags);

        /** The tasks of allocation {@code alloc} there, in its spec's order. */
        List<String> tasks(ParsedArgs flags, String alloc);
    }

    /** The most allocations listed for a TAB. */
    static final int MAX_NAMES = 500;

    /** What {@code signal} offers: the signals tasks are usually sent; any other name or number is taken too. */
    static final List<String> SIGNALS =
            List.of("SIGHUP", "SIGINT", "SIGQUIT", "SIGKILL", "SIGUSR1", "SIGUSR2", "SIGTERM", "SIGCONT", "SIGSTOP");

    private Completion() {}

    /** The lines to print for {@code words}: the words typed, the last the one being completed (maybe empty). */
    static List<String> complete(List<String> words, Names names) {
        List<String> out = new ArrayList<>();
        int directive = candidates(words, names, out);
        out.add(":" + directive);
        return out;
    }

    private static int candidates(List<String> words, Names names, List<String> out) {
        if (words.isEmpty()) {
            return NO_FILES;
        }
        String partial = words.getLast();
        List<String> done = words.subList(0, words.size() - 1);
        if (done.isEmpty()) {
            for (Subcommand c : PluginCommandLine.COMMANDS) {
                offer(out, partial, c.name(), c.summary());
            }
            offer(out, partial, "--help", FlagParser.HELP.help());
            return NO_FILES;
        }
        Subcommand command = PluginCommandLine.command(done.getFirst());
        if (command == null) {
            return NO_FILES;
        }
        List<String> typed = done.subList(1, done.size());
        boolean exec = command.name().equals("exec");
        if (exec && typed.contains("--")) {
            return NO_FILES; // the command inside the task: nothing here knows its words
        }
        List<Flag> flags = PluginCommandLine.flags(command);
        if (!typed.isEmpty()) {
            Flag valued = valued(flags, typed.getLast());
            if (valued != null) {
                return value(valued, partial, out);
            }
        }
        if (partial.startsWith("-")) {
            for (Flag f : flags) {
                offer(out, partial, f.name(), f.help());
                if (f.letter() != null && partial.length() <= 2) {
                    offer(out, partial, f.letter(), f.help());
                }
            }
            return NO_FILES;
        }
        ParsedArgs p;
        try {
            p = FlagParser.parse(flags, typed, exec);
        } catch (UsageError e) {
            return NO_FILES; // a flag this command does not take: no guess at what follows it
        }
        List<String> positional = p.positional();
        List<String> offered = switch (command.name()) {
            case "completion" -> positional.isEmpty() ? PluginCommandLine.SHELLS : List.of();
            case "version" -> List.of();
            default -> positional.isEmpty() ? names.allocations(p) : List.of();
        };
        if (positional.size() == 1
                && List.of("logs", "restart", "signal", "exec").contains(command.name())) {
            offered = names.tasks(p, positional.getFirst());
        } else if (positional.size() == 2 && command.name().equals("signal")) {
            offered = SIGNALS;
        } else if (positional.size() == 2 && exec) {
            offered = List.of("--");
        }
        offered.forEach(name -> offer(out, partial, name, null));
        return NO_FILES;
    }

    /** The flag that {@code word} names when it takes a value and the value is the next word; else null. */
    private static Flag valued(List<Flag> flags, String word) {
        for (Flag f : flags) {
            if (f.takesValue() && (word.equals(f.name()) || word.equals(f.letter()))) {
                return f;
            }
        }
        return null;
    }

    /** The values of {@code flag}: -o's formats, file names for --kubeconfig, nothing for the rest. */
    private static int value(Flag flag, String partial, List<String> out) {
        if (flag == PluginCommandLine.OUTPUT) {
            PluginCommandLine.FORMATS.forEach(f -> offer(out, partial, f, null));
        } else if (flag == PluginCommandLine.KUBECONFIG) {
            return FILES;
        }
        return NO_FILES;
    }

    /** Adds {@code value} when it starts with {@code partial}; its description (tabs and newlines out) beside it. */
    private static void offer(List<String> out, String partial, String value, String description) {
        if (!value.startsWith(partial) || value.contains("\n")) {
            return;
        }
        out.add(description == null ? value : value + "\t" + description.replaceAll("[\\t\\n]", " "));
    }
}
