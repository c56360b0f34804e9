package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.cli.flags.Subcommand;
import dev.drover.cli.flags.UsageError;
import dev.drover.cli.kube.Bodies;
import io.fabric8.kubernetes.client.Config;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.List;

/**
 * {@code kubectl drover}: the kubectl plugin ({@code operator/bin/kubectl-drover} runs it from the agent jar).
 * {@code logs} and {@code stats} read the aggregated API {@code agent.drover.dev} through the API server, as
 * {@code kubectl logs} reads a pod's, with the kubeconfig's own credentials (the Drover gateway asks the node's
 * agent); {@code signal} posts a signal for a task there; {@code status} reads the allocation and its Events.
 */
public final class KubectlDrover {

    static final int EXIT_USAGE = 2;

    static final String API = ApiAnswers.API;
    static final String GATEWAY_MISSING = ApiAnswers.GATEWAY_MISSING;

    private static final ObjectMapper JSON = new ObjectMapper();

    private KubectlDrover() {}

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, System.in, out, err, out == System.out && stdoutIsTerminal());
    }

    /** As {@link #run(String[], PrintStream, PrintStream)}, {@code exec -i} reading {@code in}, {@code out} no terminal. */
    static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
        return run(args, in, out, err, false);
    }

    /**
     * As {@link #run(String[], InputStream, PrintStream, PrintStream)}; {@code terminal}: {@code out} is one, so a
     * task's log is written with its control characters as text unless {@code --raw}.
     */
    static int run(String[] args, InputStream in, PrintStream out, PrintStream err, boolean terminal) {
        if (args.length > 0 && args[0].equals(PluginCommandLine.COMPLETE)) {
            out.print(String.join("\n", Completion.complete(List.of(args).subList(1, args.length), new ClusterNames()))
                    + "\n");
            out.flush();
            return 0;
        }
        PluginCommand command;
        try {
            command = PluginCommandLine.parse(args);
        } catch (UsageError e) {
            err.println("kubectl drover: " + e.getMessage());
            Subcommand verb = args.length == 0 ? null : PluginCommandLine.command(args[0]);
            err.print(verb == null ? PluginCommandLine.usage() : PluginCommandLine.usage(verb));
            return EXIT_USAGE;
        }
        if (command.help()) {
            out.print(
                    command.verb() == null
                            ? PluginCommandLine.usage()
                            : PluginCommandLine.usage(PluginCommandLine.command(command.verb())));
            out.flush();
            return 0;
        }
        if (command.verb().equals("completion")) {
            out.print(CompletionScripts.of(command.args().getFirst()));
            out.flush();
            return 0;
        }
        try {
            if (command.verb().equals("version")) {
                return version(command, out, err);
            }
            if (command.verb().equals("exec")) {
                Config config = ClusterAccess.config(command);
                List<String> a = command.args();
                return ExecCommand.run(
                        config,
                        new ExecCommand.Request(
                                ClusterAccess.namespace(command, config.getNamespace()),
                                a.getFirst(),
                                a.get(1),
                                command.command(),
                                command.stdin(),
                                // as kubectl exec: a terminal is for typing into, so without -i there is none
                                command.tty() && command.stdin()),
                        in,
                        out,
                        err);
            }
            boolean visible = terminal && !command.raw();
            ClusterAccess.onCluster(command, DirectCalls.REQUEST_TIMEOUT, err, (calls, namespace) -> {
                run(command, calls, namespace, out, visible);
                return null;
            });
            return 0;
        } catch (CommandFailure e) {
            // its text may carry what the API server, the gateway or an agent said: no escapes reach the terminal
            err.println("kubectl drover: " + TerminalText.escaped(explained(e, command.verb())));
            return 1;
        } catch (RuntimeException e) { // a library's surprise is still one line, not a stack trace
            err.println("kubectl drover: "
                    + TerminalText.escaped(String.valueOf(e.getMessage())
                            .lines()
                            .findFirst()
                            .orElse(e.getClass().getName()))
                    + " (-v shows the libraries' log lines)");
            return 1;
        }
    }

    /**
     * {@code version}: the plugin's build, then (without {@code --client}) the agents' versions from their Nodes; when
     * those cannot be read, the client's part is printed before the failure, as kubectl version does.
     */
    private static int version(PluginCommand command, PrintStream out, PrintStream err) throws CommandFailure {
        com.fasterxml.jackson.databind.node.ObjectNode doc = JSON.createObjectNode();
        doc.set("client", VersionCommand.client(dev.drover.metrics.BuildInfo.current()));
        JsonNode agents = null;
        try {
            if (!command.client()) {
                agents = ClusterAccess.onCluster(
                        command,
                        DirectCalls.REQUEST_TIMEOUT,
                        err,
                        (calls, namespace) -> VersionCommand.agents(calls.metadataList(VersionCommand.NODES_PATH)));
                doc.setAll((com.fasterxml.jackson.databind.node.ObjectNode) agents);
            }
        } finally {
            out.print(
                    command.output() == null
                            ? VersionCommand.text(doc.path("client"), agents)
                            : Formats.render(doc, command.output()));
            out.flush();
        }
        return 0;
    }

    /** A refusal's text, with what to do about it: the access {@code verb} needs, or credentials that work. */
    static String explained(CommandFailure e, String verb) {
        return switch (e.httpCode()) {
            case 401 ->
                "the API server does not accept your credentials (check the kubeconfig's user, or --token): "
                        + e.getMessage();
            case 403 -> "not allowed: " + verb + " needs " + PluginCommandLine.ACCESS.get(verb) + ": " + e.getMessage();
            default -> e.getMessage();
        };
    }

    /** @param visible a log's control characters are written as text (to a terminal, without --raw) */
    private static void run(
            PluginCommand command, ClusterCalls calls, String namespace, PrintStream out, boolean visible)
            throws CommandFailure {
        switch (command.verb()) {
            case "logs" -> logs(calls, namespace, command, visible ? new VisibleControls(out) : null, out);
            case "stats" -> stats(calls, namespace, command, out);
            case "restart" -> {
                List<String> a = command.args();
                AllocRestart.run(
                        calls, a.getFirst(), a.size() > 1 ? a.get(1) : null, namespace, InstantSource.system(), out);
            }
            case "signal" -> signal(calls, namespace, command, out);
            default ->
                AllocStatus.run(
                        calls, command.args().getFirst(), namespace, InstantSource.system(), command.output(), out);
        }
    }

    /** @param visible where the output goes with its control characters as text; null: to {@code out} as it is */
    private static void logs(
            ClusterCalls calls, String namespace, PluginCommand c, VisibleControls visible, PrintStream out)
            throws CommandFailure {
        String query = "?task=" + encode(c.args().get(1)) + "&stream=" + c.stream()
                + (c.tail() == null ? "" : "&tail=" + c.tail()) + (c.follow() ? "&follow=true" : "");
        OutputStream sink = visible == null ? out : visible;
        calls.agent("GET", namespace, c.args().getFirst(), "log" + query, body -> {
            byte[] buffer = new byte[8192];
            for (int n; (n = body.read(buffer)) > 0; ) {
                sink.write(buffer, 0, n);
                sink.flush();
            }
            if (visible != null) {
                visible.finish();
            }
            return null;
        });
    }

    /**
     * Whether standard output is a terminal. Since Java 22 {@link System#console()} is there even when it is not
     * ({@code | less}, a file), so its {@code isTerminal()} says.
     */
    private static boolean stdoutIsTerminal() {
        java.io.Console console = System.console();
        return console != null && console.isTerminal();
    }

    private static void stats(ClusterCalls calls, String namespace, PluginCommand c, PrintStream out)
            throws CommandFailure {
        JsonNode stats = calls.agent("GET", namespace, c.args().getFirst(), "stats", KubectlDrover::json);
        out.print(c.output() == null ? AllocStats.render(stats) : Formats.render(stats, c.output()));
        out.flush();
    }

    /** POSTs the signal; the agent's one-line answer is printed ("sent SIGUSR1 to task web of ..."). */
    private static void signal(ClusterCalls calls, String namespace, PluginCommand c, PrintStream out)
            throws CommandFailure {
        String query = "?task=" + encode(c.args().get(1)) + "&signal="
                + encode(c.args().get(2));
        JsonNode answer = calls.agent("POST", namespace, c.args().getFirst(), "signal" + query, KubectlDrover::json);
        out.println(TerminalText.clean(answer.path("message").asText("sent")));
        out.flush();
    }

    /** A JSON answer of the agent (stats, a signal's), bounded in size and in the time it takes to arrive. */
    private static JsonNode json(InputStream body) throws java.io.IOException {
        return JSON.readTree(Bodies.read(body, DirectCalls.MAX_ANSWER, DirectCalls.AGENT_TIMEOUT));
    }

    /** What an answer other than 200 means, in one sentence. */
    static String failure(int code, String body) {
        return ApiAnswers.failure(code, body);
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
