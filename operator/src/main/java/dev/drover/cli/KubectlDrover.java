package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.httpapi.AgentClient;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code kubectl drover}: the kubectl plugin ({@code operator/bin/kubectl-drover} runs it from the agent jar).
 * {@code logs} and {@code stats} find the allocation's node, the agent's port and certificate fingerprint on the
 * Node, and ask the agent's HTTPS API with the kubeconfig's token; {@code status} reads the API server only.
 */
public final class KubectlDrover {

    static final String USAGE = """
            usage: kubectl drover logs ALLOC TASK [-f|--follow] [--stderr] [--tail N] [OPTIONS]
                   kubectl drover stats ALLOC [--json] [OPTIONS]
                   kubectl drover status ALLOC [OPTIONS]

              logs    a task's output, from the agent on the allocation's node (docs/api.md);
                      -f follows it until the task is dead, --tail N starts N lines from the end
              stats   CPU, memory and device usage of each task, from the agent; --json prints the agent's answer
              status  the allocation's status, its tasks' states and recent events, and its Kubernetes Events

            OPTIONS: -n|--namespace NS, --context NAME, --kubeconfig FILE, and --token TOKEN: the bearer
            token shown to the agent, for a kubeconfig whose user has none (client certificates)
            """;
    static final int EXIT_USAGE = 2;
    /** How long the agent may take to begin its answer (stats take a quarter of a second to measure CPU). */
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);

    private static final ObjectMapper JSON = new ObjectMapper();

    private KubectlDrover() {}

    /** A command line that makes no sense; exit code 2 with the usage. */
    private static final class Misuse extends Exception {
        Misuse(String message) {
            super(message);
        }
    }

    /** The command line, read. */
    record Command(
            String verb,
            List<String> args,
            String namespace,
            boolean follow,
            String stream,
            String tail,
            boolean json,
            String context,
            String kubeconfig,
            String token) {

        private static final Set<String> VERBS = Set.of("logs", "stats", "status");

        static Command parse(String[] argv) throws Misuse {
            String verb = argv[0];
            if (!VERBS.contains(verb)) {
                throw new Misuse("unknown command \"" + verb + "\"");
            }
            List<String> positional = new ArrayList<>();
            boolean follow = false;
            boolean json = false;
            String stream = "stdout";
            String tail = null;
            String namespace = null;
            String context = null;
            String kubeconfig = null;
            String token = null;
            for (int i = 1; i < argv.length; i++) {
                String flag = argv[i];
                String inline = null;
                int eq = flag.indexOf('=');
                if (flag.startsWith("--") && eq > 0) { // --namespace=team-a, as kubectl takes it
                    inline = flag.substring(eq + 1);
                    flag = flag.substring(0, eq);
                }
                switch (flag) {
                    case "-f", "--follow" -> follow = only(verb, "logs", flag, true);
                    case "--stderr" -> stream = only(verb, "logs", flag, "stderr");
                    case "--json" -> json = only(verb, "stats", flag, true);
                    case "--tail", "-n", "--namespace", "--context", "--kubeconfig", "--token" -> {
                        if (inline == null && i + 1 >= argv.length) {
                            throw new Misuse(flag + " needs a value");
                        }
                        String value = inline != null ? inline : argv[++i];
                        switch (flag) {
                            case "--tail" -> {
                                tail = only(verb, "logs", flag, value);
                                if (!tail.matches("[0-9]{1,9}")) {
                                    throw new Misuse("--tail needs a number of lines, not \"" + tail + "\"");
                                }
                            }
                            case "--context" -> context = value;
                            case "--kubeconfig" -> kubeconfig = value;
                            case "--token" -> token = value;
                            default -> namespace = value;
                        }
                    }
                    default -> {
                        if (flag.startsWith("-")) {
                            throw new Misuse("unknown flag \"" + flag + "\"");
                        }
                        positional.add(flag);
                    }
                }
            }
            int wanted = verb.equals("logs") ? 2 : 1;
            if (positional.size() != wanted) {
                throw new Misuse(verb + (wanted == 2 ? " needs ALLOC and TASK" : " needs ALLOC"));
            }
            return new Command(verb, positional, namespace, follow, stream, tail, json, context, kubeconfig, token);
        }

        private static <T> T only(String verb, String owner, String flag, T value) throws Misuse {
            if (!verb.equals(owner)) {
                throw new Misuse(flag + " is a flag of " + owner + ", not of " + verb);
            }
            return value;
        }
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("help") || args[0].equals("--help") || args[0].equals("-h")) {
            err.print(USAGE);
            return args.length == 0 ? EXIT_USAGE : 0;
        }
        Command command;
        try {
            command = Command.parse(args);
        } catch (Misuse e) {
            err.println("kubectl drover: " + e.getMessage());
            err.print(USAGE);
            return EXIT_USAGE;
        }
        try {
            Config config = config(command);
            String namespace = command.namespace() != null
                    ? command.namespace()
                    : config.getNamespace() != null ? config.getNamespace() : "default";
            try (KubernetesClient client = new KubernetesClientBuilder()
                    .withConfig(config)
                    .withHttpClientFactory(new JdkHttpClientFactory())
                    .build()) {
                run(command, client, config, namespace, out);
            }
            return 0;
        } catch (CommandFailure e) {
            err.println("kubectl drover: " + e.getMessage());
            return 1;
        }
    }

    /** The kubeconfig (KUBECONFIG or ~/.kube/config unless --kubeconfig), at --context or its current one. */
    private static Config config(Command c) throws CommandFailure {
        if (c.kubeconfig() == null) {
            return Config.autoConfigure(c.context());
        }
        Path file = Path.of(c.kubeconfig());
        if (!Files.isReadable(file)) {
            throw new CommandFailure(
                    "cannot read the kubeconfig " + c.kubeconfig() + ": no such file, or not readable");
        }
        try {
            return Config.fromKubeconfig(c.context(), file.toFile());
        } catch (RuntimeException e) {
            throw new CommandFailure("cannot read the kubeconfig " + c.kubeconfig() + ": " + e.getMessage());
        }
    }

    private static void run(Command command, KubernetesClient client, Config config, String namespace, PrintStream out)
            throws CommandFailure {
        switch (command.verb()) {
            case "logs" -> logs(client, token(command, config), namespace, command, out);
            case "stats" -> stats(client, token(command, config), namespace, command, out);
            default ->
                AllocStatus.run(client, command.args().getFirst(), namespace, java.time.InstantSource.system(), out);
        }
    }

    private static void logs(KubernetesClient client, String token, String namespace, Command c, PrintStream out)
            throws CommandFailure {
        String alloc = c.args().get(0);
        String query = "?stream=" + c.stream() + (c.tail() == null ? "" : "&tail=" + c.tail())
                + (c.follow() ? "&follow=true" : "");
        ask(
                client,
                token,
                namespace,
                alloc,
                "logs/" + AgentClient.encode(c.args().get(1)) + query,
                body -> {
                    byte[] buffer = new byte[8192];
                    for (int n; (n = body.read(buffer)) > 0; ) {
                        out.write(buffer, 0, n);
                        out.flush();
                    }
                    return null;
                });
    }

    private static void stats(KubernetesClient client, String token, String namespace, Command c, PrintStream out)
            throws CommandFailure {
        JsonNode stats = ask(client, token, namespace, c.args().getFirst(), "stats", JSON::readTree);
        out.print(c.json() ? stats.toPrettyString() + "\n" : AllocStats.render(stats));
        out.flush();
    }

    /** Asks the agent on the allocation's node for one of its subresources. */
    private static <T> T ask(
            KubernetesClient client,
            String token,
            String namespace,
            String alloc,
            String subresource,
            AgentClient.BodyReader<T> reader)
            throws CommandFailure {
        try {
            Allocation a = client.resources(Allocation.class)
                    .inNamespace(namespace)
                    .withName(alloc)
                    .get();
            if (a == null) {
                throw new CommandFailure("allocation " + namespace + "/" + alloc + " not found");
            }
            String node = a.getSpec() == null ? null : a.getSpec().getNodeName();
            AgentClient.Endpoint agent = AgentClient.find(client, node);
            return AgentClient.get(
                    agent, AgentClient.path(namespace, alloc, subresource), token, ANSWER_TIMEOUT, reader);
        } catch (KubernetesClientException e) {
            throw new CommandFailure("the API server said: " + e.getMessage());
        } catch (AgentClient.AgentException e) {
            throw new CommandFailure(e.getMessage());
        } catch (IOException e) {
            throw new CommandFailure("reading the agent's answer: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommandFailure("interrupted");
        }
    }

    /** The bearer token the agent checks with the API server: --token's, else the kubeconfig user's. */
    private static String token(Command command, Config config) throws CommandFailure {
        String token = command.token() != null ? command.token() : AgentClient.bearerToken(config);
        if (token == null || token.isBlank()) {
            throw new CommandFailure(
                    "your kubeconfig's user has no bearer token, which the agent needs to check who you are"
                            + " (a client certificate cannot be passed on); give one with --token, e.g. from"
                            + " kubectl create token SERVICEACCOUNT");
        }
        return token;
    }
}
