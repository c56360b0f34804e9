package dev.drover.cli;

import dev.drover.cli.flags.Flag;
import dev.drover.cli.flags.FlagParser;
import dev.drover.cli.flags.HelpText;
import dev.drover.cli.flags.ParsedArgs;
import dev.drover.cli.flags.Subcommand;
import dev.drover.cli.flags.UsageError;
import dev.drover.common.UserText;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The command line of {@code kubectl drover}: its commands and flags in one table, from which both the parser and
 * {@code --help} are made, and the {@link PluginCommand} a command line reads as.
 */
final class PluginCommandLine {

    static final Flag NAMESPACE = Flag.valued(
            "--namespace",
            "-n",
            "NS",
            "the allocation's namespace (default: the" + " kubeconfig context's, else default)");
    static final Flag CONTEXT =
            Flag.valued("--context", null, "NAME", "the kubeconfig context to use (default: its" + " current-context)");
    static final Flag KUBECONFIG = Flag.valued(
            "--kubeconfig", null, "FILE", "the kubeconfig (default: $KUBECONFIG," + " else ~/.kube/config)");
    static final Flag TOKEN = Flag.valued(
            "--token", null, "TOKEN", "a bearer token that replaces the kubeconfig" + " user's credentials");
    static final Flag VERBOSE = Flag.on(
            "--verbose",
            "-v",
            "shows each request and the libraries' log lines on stderr"
                    + " (DROVER_LOG=debug|info|warn|error also does, at that level)");

    /** The flags every command takes. */
    static final List<Flag> COMMON = List.of(NAMESPACE, CONTEXT, KUBECONFIG, TOKEN, VERBOSE, FlagParser.HELP);

    static final Flag FOLLOW = Flag.on("--follow", "-f", "follows the output until the task is dead");
    static final Flag STDERR = Flag.on("--stderr", null, "the task's standard error instead of its output");
    static final Flag TAIL = Flag.valued("--tail", null, "N", "starts N lines from the end");
    static final Flag RAW = Flag.on(
            "--raw",
            null,
            "writes the output as the task wrote it; without it, to a terminal, control characters show as text"
                    + " (ESC as \\x1b) so the task's escape sequences do not act on your terminal");
    static final Flag JSON = Flag.on("--json", null, "prints the agent's answer as JSON (as -o json)");
    static final Flag OUTPUT = Flag.valued(
            "--output",
            "-o",
            "FORMAT",
            "json or yaml: what the text shows, for scripts (field names: docs/api.md#kubectl-drover)");
    static final Flag CLIENT = Flag.on("--client", null, "the plugin's own version only; asks the cluster nothing");

    /** The hidden command that {@code kubectl_complete-drover} runs ({@link Completion}). */
    static final String COMPLETE = "__complete";

    static final String EXEC_NEEDS_DASHES =
            "exec needs the command after `--`: kubectl drover exec ALLOC TASK -- CMD...";

    /** What {@code -o} takes. */
    static final List<String> FORMATS = List.of("json", "yaml");

    /** The shells {@code completion} writes a script for. */
    static final List<String> SHELLS = List.of("bash", "zsh", "fish");

    static final Flag STDIN =
            Flag.on("--stdin", "-i", "sends your input to the command (its end closes the" + " command's input)");
    static final Flag TTY = Flag.on(
            "--tty",
            "-t",
            "with -i, runs the command on a terminal (yours goes raw for the"
                    + " session); without -i it is ignored, as kubectl exec does");

    static final List<Subcommand> COMMANDS = List.of(
            new Subcommand(
                    "logs",
                    "ALLOC TASK",
                    "a task's output, from the agent on the allocation's node",
                    List.of(FOLLOW, STDERR, TAIL, RAW)),
            new Subcommand(
                    "stats",
                    "ALLOC",
                    "CPU, memory and device usage of each task, from the agent",
                    List.of(OUTPUT, JSON)),
            new Subcommand(
                    "status",
                    "ALLOC",
                    "the allocation's status, its tasks' states and recent events, and its Kubernetes Events",
                    List.of(OUTPUT)),
            new Subcommand(
                    "restart",
                    "ALLOC [TASK]",
                    "restarts the running tasks (or TASK only) once; not counted against the restart policy",
                    List.of()),
            new Subcommand(
                    "signal",
                    "ALLOC TASK SIGNAL",
                    "sends SIGNAL (SIGUSR1, usr1, HUP...) to the running TASK; its Signaling event names you",
                    List.of()),
            new Subcommand(
                    "exec",
                    "ALLOC TASK -- COMMAND [ARG...]",
                    "runs COMMAND inside the running TASK and exits with its exit code",
                    List.of(STDIN, TTY)),
            new Subcommand(
                    "version",
                    "",
                    "the plugin's version, and the versions the Drover agents on the cluster's nodes run",
                    List.of(CLIENT, OUTPUT)),
            new Subcommand(
                    "completion",
                    "bash|zsh|fish",
                    "prints a completion script for kubectl-drover (kubectl drover completes through"
                            + " kubectl_complete-drover)",
                    List.of()));

    /** What each command needs to be allowed, said in its help and in a refusal. */
    static final Map<String, String> ACCESS = Map.of(
            "logs", "get on allocations/log in API group agent.drover.dev",
            "stats", "get on allocations/stats in API group agent.drover.dev",
            "status", "get on allocations in API group drover.dev (and list on events, else they are left out)",
            "restart", "get and patch on allocations in API group drover.dev",
            "signal", "create on allocations/signal in API group agent.drover.dev",
            "exec", "get and create on allocations/exec in API group agent.drover.dev",
            "version", "list on nodes, for the agents' versions (--client needs nothing)",
            "completion", "nothing: it asks the cluster nothing");

    private PluginCommandLine() {}

    /** The command line read; {@link PluginCommand#help()} when it asks for help (then nothing else is checked). */
    static PluginCommand parse(String[] argv) throws UsageError {
        if (argv.length == 0) {
            throw new UsageError("a command is needed");
        }
        String verb = argv[0];
        if (verb.equals("help") || verb.equals("--help") || verb.equals("-h")) {
            return PluginCommand.help(null);
        }
        Subcommand command = command(verb);
        if (command == null) {
            throw new UsageError(
                    verb.startsWith("-")
                            ? "unknown flag " + UserText.quote(verb) + " (flags come after the command)"
                            : "unknown command " + UserText.quote(verb) + " (commands: " + names() + ")");
        }
        ParsedArgs p;
        try {
            p = FlagParser.parse(flags(command), Arrays.asList(argv).subList(1, argv.length), verb.equals("exec"));
        } catch (UsageError e) {
            if (verb.equals("exec") && e.flag() != null && !Arrays.asList(argv).contains("--")) {
                throw new UsageError(EXEC_NEEDS_DASHES); // exec web main ls -l: the command's flag, not exec's
            }
            String owner = e.flag() == null ? null : ownerOf(e.flag());
            throw owner == null ? e : new UsageError(e.flag() + " is a flag of " + owner + ", not of " + verb);
        }
        String output = output(p);
        if (p.help()) {
            return PluginCommand.help(verb);
        }
        checkArguments(verb, p);
        String tail = p.value(TAIL.name());
        if (tail != null && !tail.matches("[0-9]{1,9}")) {
            throw new UsageError("--tail needs a number of lines, not " + UserText.quote(tail));
        }
        return new PluginCommand(
                verb,
                p.positional(),
                p.value(NAMESPACE.name()),
                p.has(FOLLOW.name()),
                p.has(STDERR.name()) ? "stderr" : "stdout",
                tail,
                p.has(RAW.name()),
                output,
                p.value(CONTEXT.name()),
                p.value(KUBECONFIG.name()),
                p.value(TOKEN.name()),
                p.has(STDIN.name()),
                p.has(TTY.name()),
                p.rest(),
                p.has(VERBOSE.name()),
                p.has(CLIENT.name()),
                false);
    }

    /** Where the command line {@code p} (of any command) reaches the cluster: its namespace, context, kubeconfig. */
    static PluginCommand connection(ParsedArgs p) {
        return new PluginCommand(
                COMPLETE,
                List.of(),
                p.value(NAMESPACE.name()),
                false,
                "stdout",
                null,
                false,
                null,
                p.value(CONTEXT.name()),
                p.value(KUBECONFIG.name()),
                p.value(TOKEN.name()),
                false,
                false,
                List.of(),
                false,
                false,
                false);
    }

    /** {@code -o FORMAT}, or {@code --json}: {@code json}, {@code yaml}, or null for text. */
    private static String output(ParsedArgs p) throws UsageError {
        String output = p.value(OUTPUT.name());
        if (output != null && !FORMATS.contains(output)) {
            throw new UsageError(
                    "-o (--output) takes json or yaml, not " + UserText.quote(output) + " (without it: text)");
        }
        if (p.has(JSON.name())) {
            if (output != null && !output.equals("json")) {
                throw new UsageError("--json and -o " + output + " ask for different formats: give one");
            }
            return "json";
        }
        return output;
    }

    private static void checkArguments(String verb, ParsedArgs p) throws UsageError {
        int n = p.positional().size();
        switch (verb) {
            case "logs" -> require(n == 2, "logs needs ALLOC and TASK");
            case "signal" -> require(n == 3, "signal needs ALLOC, TASK and SIGNAL");
            case "restart" -> require(n == 1 || n == 2, "restart needs ALLOC, and TASK to restart one task only");
            case "exec" -> {
                require(n >= 2, "exec needs ALLOC and TASK: kubectl drover exec ALLOC TASK -- CMD...");
                require(p.dashDash() && !p.rest().isEmpty(), EXEC_NEEDS_DASHES);
                require(
                        n == 2,
                        "exec takes ALLOC and TASK before `--`, then the command: kubectl drover exec ALLOC TASK"
                                + " -- CMD...");
            }
            case "version" -> require(n == 0, "version takes no arguments (--client: the plugin's only)");
            case "completion" ->
                require(
                        n == 1 && SHELLS.contains(p.positional().getFirst()),
                        "completion needs the shell: kubectl drover completion bash|zsh|fish");
            default -> require(n == 1, verb + " needs ALLOC");
        }
    }

    private static void require(boolean ok, String message) throws UsageError {
        if (!ok) {
            throw new UsageError(message);
        }
    }

    /** Every flag {@code command} takes: its own, then the common ones. */
    static List<Flag> flags(Subcommand command) {
        List<Flag> all = new ArrayList<>(command.flags());
        all.addAll(COMMON);
        return all;
    }

    static Subcommand command(String name) {
        return COMMANDS.stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
    }

    /** The commands that take {@code flag}, said as a list ("status, stats and version"); null when none does. */
    private static String ownerOf(String flag) {
        List<String> owners = new ArrayList<>();
        for (Subcommand c : COMMANDS) {
            for (Flag f : c.flags()) {
                if (flag.equals(f.name()) || flag.equals(f.letter())) {
                    owners.add(c.name());
                }
            }
        }
        if (owners.isEmpty()) {
            return null;
        }
        String last = owners.removeLast();
        return owners.isEmpty() ? last : String.join(", ", owners) + " and " + last;
    }

    private static String names() {
        return String.join(", ", COMMANDS.stream().map(Subcommand::name).toList());
    }

    /** {@code kubectl drover --help}: every command and every flag, one line each. */
    static String usage() {
        StringBuilder out = new StringBuilder("""
                kubectl drover: Drover allocations' tasks, from the agent on their node (docs/api.md)

                usage: kubectl drover COMMAND ARGS... [FLAGS]
                       kubectl drover COMMAND --help

                commands:
                """);
        out.append(HelpText.commands(COMMANDS));
        for (Subcommand c : COMMANDS) {
            if (!c.flags().isEmpty()) {
                out.append("\nflags of ").append(c.name()).append(":\n").append(HelpText.flags(c.flags()));
            }
        }
        out.append("\nflags of every command:\n").append(HelpText.flags(COMMON));
        out.append("""

                logs, stats, signal and exec go through the Kubernetes API server to the Drover gateway (API
                group agent.drover.dev); status and restart read and patch the allocation (drover.dev);
                version reads the agents' versions from their Nodes (annotation drover.dev/agent-version).
                Completion: kubectl 1.26+ completes kubectl drover through kubectl_complete-drover on PATH
                (beside kubectl-drover: link it into a directory of PATH; docs/install.md).
                Needs a JDK 25 (JAVA_HOME, or java on PATH).
                """);
        return out.toString();
    }

    /** {@code kubectl drover COMMAND --help}: what it does, its arguments, every flag it takes, what it needs. */
    static String usage(Subcommand c) {
        return "usage: kubectl drover " + c.synopsis().replace(" -- ", " [FLAGS] -- ")
                + (c.name().equals("exec") ? "" : " [FLAGS]") + "\n\n" + c.summary() + "\n\nflags:\n"
                + HelpText.flags(flags(c)) + "\nneeds " + ACCESS.get(c.name()) + "\n";
    }
}
