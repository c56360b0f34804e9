package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.cli.flags.Subcommand;
import dev.drover.cli.flags.UsageError;
import dev.drover.web.OwnedHttpClients;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
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

    static final int EXIT_USAGE = 2;
    /** How long the answer may take to begin (stats take a quarter of a second to measure CPU). */
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);

    static final String API = ApiAnswers.API;
    static final String GATEWAY_MISSING = ApiAnswers.GATEWAY_MISSING;

    private static final ObjectMapper JSON = new ObjectMapper();

    private KubectlDrover() {}

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, System.in, out, err);
    }

    /** As {@link #run(String[], PrintStream, PrintStream)}, {@code exec -i} reading {@code in}. */
    static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
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
            OwnedHttpClients http = new OwnedHttpClients();
            try (KubernetesClient client = new KubernetesClientBuilder()
                    .withConfig(config)
                    .withHttpClientFactory(http)
                    .build()) {
                run(command, client, config, namespace, out);
            } finally {
                http.shutdown();
            }
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

    /**
     * The kubeconfig (KUBECONFIG or ~/.kube/config unless --kubeconfig), at --context or its current one; with
     * --token, that token replaces the user's credentials.
     */
    private static Config config(PluginCommand c) throws CommandFailure {
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

    private static Config kubeconfig(PluginCommand c) throws CommandFailure {
        if (c.kubeconfig() == null) {
            String missing = Kubeconfigs.missing(System.getenv(), Path.of(System.getProperty("user.home")));
            if (missing != null) {
                throw new CommandFailure(missing);
            }
            return Kubeconfigs.checkContext(Config.autoConfigure(c.context()), c.context());
        }
        Path file = Path.of(c.kubeconfig());
        if (!Files.isReadable(file)) {
            throw new CommandFailure(
                    "cannot read the kubeconfig " + c.kubeconfig() + ": no such file, or not readable");
        }
        try {
            return Kubeconfigs.checkContext(Config.fromKubeconfig(c.context(), file.toFile()), c.context());
        } catch (RuntimeException e) {
            throw new CommandFailure("cannot read the kubeconfig " + c.kubeconfig() + ": " + e.getMessage());
        }
    }

    private static void run(
            PluginCommand command, KubernetesClient client, Config config, String namespace, PrintStream out)
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

    private static void logs(KubernetesClient client, String namespace, PluginCommand c, PrintStream out)
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

    private static void stats(KubernetesClient client, String namespace, PluginCommand c, PrintStream out)
            throws CommandFailure {
        JsonNode stats = ask(client, namespace, c.args().getFirst(), "stats", JSON::readTree);
        out.print(c.json() ? stats.toPrettyString() + "\n" : AllocStats.render(stats));
        out.flush();
    }

    /** POSTs the signal; the agent's one-line answer is printed ("sent SIGUSR1 to task web of ..."). */
    private static void signal(KubernetesClient client, String namespace, PluginCommand c, PrintStream out)
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
            throw ApiAnswers.unreachable(client.getConfiguration().getMasterUrl(), e);
        }
        try (InputStream body = response.body()) {
            if (response.code() != 200) {
                String text = new String(body.readNBytes(64 << 10), StandardCharsets.UTF_8);
                throw new CommandFailure(failure(response.code(), text), response.code());
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
