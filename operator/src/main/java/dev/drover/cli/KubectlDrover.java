package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code kubectl drover}: the kubectl plugin ({@code operator/bin/kubectl-drover} runs it from the agent jar).
 * {@code logs} and {@code stats} read the aggregated API {@code agent.drover.dev} through the API server, as
 * {@code kubectl logs} reads a pod's, with the kubeconfig's own credentials (the Drover gateway asks the node's
 * agent); {@code signal} posts a signal for a task there; {@code status} reads the allocation and its Events.
 */
public final class KubectlDrover {

    static final String USAGE = """
            usage: kubectl drover logs ALLOC TASK [-f|--follow] [--stderr] [--tail N] [OPTIONS]
                   kubectl drover stats ALLOC [--json] [OPTIONS]
                   kubectl drover status ALLOC [OPTIONS]
                   kubectl drover restart ALLOC [TASK] [OPTIONS]
                   kubectl drover signal ALLOC TASK SIGNAL [OPTIONS]
                   kubectl drover exec [-i] [-t] ALLOC TASK [OPTIONS] -- COMMAND [ARG...]

              logs    a task's output, from the agent on the allocation's node (docs/api.md);
                      -f follows it until the task is dead, --tail N starts N lines from the end
              stats   CPU, memory and device usage of each task, from the agent; --json prints the agent's answer
              status  the allocation's status, its tasks' states and recent events, and its Kubernetes Events
              restart restarts the running tasks (or TASK only) once: sets the annotation drover.dev/restartedAt
                      to the time now (TASK@time); not counted against the restart policy (docs/allocations.md)
              signal  sends SIGNAL (SIGUSR1, usr1, HUP...) to the running TASK; its Signaling event names you
              exec    runs COMMAND inside the running TASK (its Exec event names you) and exits with its exit
                      code; -i|--stdin sends your input to it, -t|--tty with -i runs it on a terminal (yours
                      goes raw for the session; its size is sent at the start and when it changes, looked at
                      once a second); -t without -i is ignored, as kubectl exec does

            OPTIONS: -n|--namespace NS, --context NAME, --kubeconfig FILE, and --token TOKEN: a bearer
            token that replaces the kubeconfig user's credentials

            logs and stats go through the Kubernetes API server (group agent.drover.dev, served by the
            Drover gateway): they need get on allocations/log or allocations/stats in that group;
            signal needs create on allocations/signal; exec needs get and create on allocations/exec
            (the API server lets the WebSocket GET through for get, the gateway checks create).
            """;
    static final int EXIT_USAGE = 2;
    /** How long the answer may take to begin (stats take a quarter of a second to measure CPU). */
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);

    static final String API = ApiAnswers.API;
    static final String GATEWAY_MISSING = ApiAnswers.GATEWAY_MISSING;

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
            String token,
            boolean stdin,
            boolean tty,
            List<String> command) {

        Command(
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
            this(
                    verb,
                    args,
                    namespace,
                    follow,
                    stream,
                    tail,
                    json,
                    context,
                    kubeconfig,
                    token,
                    false,
                    false,
                    List.of());
        }

        private static final Set<String> VERBS = Set.of("logs", "stats", "status", "restart", "signal", "exec");

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
            boolean stdin = false;
            boolean tty = false;
            List<String> command = List.of();
            for (int i = 1; i < argv.length; i++) {
                String flag = argv[i];
                if (flag.equals("--") && verb.equals("exec")) {
                    command = List.of(argv).subList(i + 1, argv.length);
                    break;
                }
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
                    case "-i", "--stdin" -> stdin = only(verb, "exec", flag, true);
                    case "-t", "--tty" -> tty = only(verb, "exec", flag, true);
                    case "-it", "-ti" -> {
                        stdin = only(verb, "exec", flag, true);
                        tty = true;
                    }
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
            int wanted = verb.equals("signal") ? 3 : verb.equals("logs") || verb.equals("exec") ? 2 : 1;
            if (verb.equals("exec") && positional.size() == 2 && command.isEmpty()) {
                throw new Misuse("exec needs the command after --: exec ALLOC TASK -- COMMAND [ARG...]");
            }
            if (verb.equals("restart") && positional.size() == 2) {
                wanted = 2; // restart ALLOC TASK
            }
            if (positional.size() != wanted) {
                throw new Misuse(
                        verb.equals("restart")
                                ? "restart needs ALLOC, and TASK to restart one task only"
                                : verb
                                        + (wanted == 3
                                                ? " needs ALLOC, TASK and SIGNAL"
                                                : wanted == 2 ? " needs ALLOC and TASK" : " needs ALLOC"));
            }
            return new Command(
                    verb,
                    positional,
                    namespace,
                    follow,
                    stream,
                    tail,
                    json,
                    context,
                    kubeconfig,
                    token,
                    stdin,
                    tty,
                    command);
        }

        private static <T> T only(String verb, String owner, String flag, T value) throws Misuse {
            if (!verb.equals(owner)) {
                throw new Misuse(flag + " is a flag of " + owner + ", not of " + verb);
            }
            return value;
        }
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, System.in, out, err);
    }

    /** As {@link #run(String[], PrintStream, PrintStream)}, {@code exec -i} reading {@code in}. */
    static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
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
            if (command.verb().equals("exec")) {
                List<String> a = command.args();
                return ExecCommand.run(
                        config,
                        new ExecCommand.Request(
                                namespace,
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
            try (KubernetesClient client = new KubernetesClientBuilder()
                    .withConfig(config)
                    .withHttpClientFactory(new JdkHttpClientFactory())
                    .build()) {
                run(command, client, config, namespace, out);
            }
            return 0;
        } catch (CommandFailure e) {
            // its text may carry what the API server, the gateway or an agent said: no escapes reach the terminal
            err.println("kubectl drover: " + TerminalText.escaped(e.getMessage()));
            return 1;
        }
    }

    /**
     * The kubeconfig (KUBECONFIG or ~/.kube/config unless --kubeconfig), at --context or its current one; with
     * --token, that token replaces the user's credentials.
     */
    private static Config config(Command c) throws CommandFailure {
        Config config = kubeconfig(c);
        if (c.token() != null) {
            config.setOauthToken(c.token());
            config.setAutoOAuthToken(null);
            config.setOauthTokenProvider(null);
            config.setAuthProvider(null);
            config.setClientCertData(null);
            config.setClientCertFile(null);
            config.setClientKeyData(null);
            config.setClientKeyFile(null);
            config.setUsername(null);
            config.setPassword(null);
        }
        return config;
    }

    private static Config kubeconfig(Command c) throws CommandFailure {
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
            case "logs" -> logs(client, namespace, command, out);
            case "stats" -> stats(client, namespace, command, out);
            case "restart" -> {
                List<String> a = command.args();
                AllocRestart.run(
                        client, a.getFirst(), a.size() > 1 ? a.get(1) : null, namespace, InstantSource.system(), out);
            }
            case "signal" -> signal(client, namespace, command, out);
            default ->
                AllocStatus.run(client, command.args().getFirst(), namespace, java.time.InstantSource.system(), out);
        }
    }

    private static void logs(KubernetesClient client, String namespace, Command c, PrintStream out)
            throws CommandFailure {
        String query = "?task=" + encode(c.args().get(1)) + "&stream=" + c.stream()
                + (c.tail() == null ? "" : "&tail=" + c.tail()) + (c.follow() ? "&follow=true" : "");
        ask(client, namespace, c.args().getFirst(), "log" + query, body -> {
            byte[] buffer = new byte[8192];
            for (int n; (n = body.read(buffer)) > 0; ) {
                out.write(buffer, 0, n);
                out.flush();
            }
            return null;
        });
    }

    private static void stats(KubernetesClient client, String namespace, Command c, PrintStream out)
            throws CommandFailure {
        JsonNode stats = ask(client, namespace, c.args().getFirst(), "stats", JSON::readTree);
        out.print(c.json() ? stats.toPrettyString() + "\n" : AllocStats.render(stats));
        out.flush();
    }

    /** POSTs the signal; the agent's one-line answer is printed ("sent SIGUSR1 to task web of ..."). */
    private static void signal(KubernetesClient client, String namespace, Command c, PrintStream out)
            throws CommandFailure {
        String query = "?task=" + encode(c.args().get(1)) + "&signal="
                + encode(c.args().get(2));
        JsonNode answer = ask(client, "POST", namespace, c.args().getFirst(), "signal" + query, JSON::readTree);
        out.println(TerminalText.clean(answer.path("message").asText("sent")));
        out.flush();
    }

    /** Reads a successful answer's body; it is closed afterwards. */
    private interface BodyReader<T> {
        T read(InputStream body) throws IOException;
    }

    /**
     * GETs an allocation's subresource from the aggregated API {@code agent.drover.dev} through the API server, with
     * the kubeconfig's credentials, and hands a 200's body, as it streams in, to {@code reader}.
     */
    private static <T> T ask(
            KubernetesClient client, String namespace, String alloc, String subresourceAndQuery, BodyReader<T> reader)
            throws CommandFailure {
        return ask(client, "GET", namespace, alloc, subresourceAndQuery, reader);
    }

    /** As {@link #ask(KubernetesClient, String, String, String, BodyReader)}, with {@code method}: a POST has no body. */
    private static <T> T ask(
            KubernetesClient client,
            String method,
            String namespace,
            String alloc,
            String subresourceAndQuery,
            BodyReader<T> reader)
            throws CommandFailure {
        HttpClient http = client.getHttpClient();
        String url = client.getConfiguration().getMasterUrl().replaceAll("/+$", "") + API + "/namespaces/"
                + encode(namespace) + "/allocations/" + encode(alloc) + "/" + subresourceAndQuery;
        HttpResponse<InputStream> response;
        try {
            HttpRequest.Builder request = http.newHttpRequestBuilder().uri(url);
            if (method.equals("POST")) {
                request.post("application/json", new byte[0]);
            }
            response = http.sendAsync(request.build(), InputStream.class)
                    .get(ANSWER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommandFailure("interrupted");
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new CommandFailure("cannot reach the API server at "
                    + client.getConfiguration().getMasterUrl() + ": " + cause.getMessage());
        }
        try (InputStream body = response.body()) {
            if (response.code() != 200) {
                String text = new String(body.readNBytes(64 << 10), StandardCharsets.UTF_8);
                throw new CommandFailure(failure(response.code(), text));
            }
            return reader.read(body);
        } catch (IOException e) {
            throw new CommandFailure("reading the answer: " + e.getMessage());
        }
    }

    /** What an answer other than 200 means, in one sentence. */
    static String failure(int code, String body) {
        return ApiAnswers.failure(code, body);
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
