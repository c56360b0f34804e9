package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.httpapi.AgentApi;
import dev.drover.httpapi.Pinning;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code kubectl drover}: the kubectl plugin ({@code operator/bin/kubectl-drover}
 * runs it from the agent jar). {@code logs ALLOC TASK} finds the allocation's
 * node, the agent's port and certificate fingerprint on the Node, and reads the
 * task's output from the agent's HTTPS API with the kubeconfig's token.
 */
public final class KubectlDrover {

    static final String USAGE = """
            usage: kubectl drover logs ALLOC TASK [-f|--follow] [--stderr] [--tail N] [-n|--namespace NS]

              logs    a task's output, from the agent on the allocation's node (docs/api.md);
                      -f follows it until the task is dead, --tail N starts N lines from the end
            """;
    static final int EXIT_USAGE = 2;

    private static final ObjectMapper JSON = new ObjectMapper();

    private KubectlDrover() {
    }

    /** A failure to explain to the user in one line; exit code 1. */
    static final class Failure extends Exception {
        Failure(String message) {
            super(message);
        }
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || !args[0].equals("logs")) {
            err.print(USAGE);
            return args.length > 0 && (args[0].equals("help") || args[0].equals("--help")) ? 0 : EXIT_USAGE;
        }
        List<String> positional = new ArrayList<>();
        boolean follow = false;
        String stream = "stdout";
        String tail = null;
        String namespace = null;
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "-f", "--follow" -> follow = true;
                case "--stderr" -> stream = "stderr";
                case "--tail", "-n", "--namespace" -> {
                    if (i + 1 >= args.length) {
                        err.println("kubectl drover: " + args[i] + " needs a value");
                        err.print(USAGE);
                        return EXIT_USAGE;
                    }
                    if (args[i].equals("--tail")) {
                        tail = args[++i];
                    } else {
                        namespace = args[++i];
                    }
                }
                default -> {
                    if (args[i].startsWith("-")) {
                        err.println("kubectl drover: unknown flag \"" + args[i] + "\"");
                        err.print(USAGE);
                        return EXIT_USAGE;
                    }
                    positional.add(args[i]);
                }
            }
        }
        if (positional.size() != 2 || (tail != null && !tail.matches("[0-9]+"))) {
            err.println("kubectl drover: logs needs ALLOC and TASK" + (tail != null && !tail.matches("[0-9]+")
                    ? ", and --tail a number of lines" : ""));
            err.print(USAGE);
            return EXIT_USAGE;
        }
        try {
            logs(positional.get(0), positional.get(1), namespace, stream, tail, follow, out);
            return 0;
        } catch (Failure e) {
            err.println("kubectl drover: " + e.getMessage());
            return 1;
        }
    }

    static void logs(String alloc, String task, String namespace, String stream, String tail, boolean follow,
                     PrintStream out) throws Failure {
        Config config = Config.autoConfigure(null);
        String ns = namespace != null ? namespace : config.getNamespace() != null ? config.getNamespace() : "default";
        String token = config.getAutoOAuthToken() != null ? config.getAutoOAuthToken() : config.getOauthToken();
        if (token == null || token.isBlank()) {
            throw new Failure("your kubeconfig's user has no bearer token, which the agent needs to check who you are");
        }
        URI target;
        String fingerprint;
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
                .withHttpClientFactory(new JdkHttpClientFactory()).build()) {
            Allocation a = client.resources(Allocation.class).inNamespace(ns).withName(alloc).get();
            if (a == null) {
                throw new Failure("allocation " + ns + "/" + alloc + " not found");
            }
            String nodeName = a.getSpec() == null ? null : a.getSpec().getNodeName();
            Node node = nodeName == null ? null : client.nodes().withName(nodeName).get();
            if (node == null) {
                throw new Failure("allocation " + ns + "/" + alloc + " is bound to node \"" + nodeName
                        + "\", which does not exist");
            }
            Map<String, String> annotations = node.getMetadata().getAnnotations() == null ? Map.of()
                    : node.getMetadata().getAnnotations();
            String port = annotations.get(AgentApi.PORT_ANNOTATION);
            fingerprint = annotations.get(AgentApi.CERTIFICATE_ANNOTATION);
            if (port == null || fingerprint == null) {
                throw new Failure("node " + nodeName + " publishes no agent API (is the agent running there, with"
                        + " apiPort set?)");
            }
            String query = "stream=" + stream + (tail == null ? "" : "&tail=" + tail) + (follow ? "&follow=true" : "");
            target = URI.create("https://" + address(node, config) + ":" + port + "/v1/allocations/"
                    + enc(ns) + "/" + enc(alloc) + "/logs/" + enc(task) + "?" + query);
        } catch (KubernetesClientException e) {
            throw new Failure("the API server said: " + e.getMessage());
        }
        try (HttpClient http = HttpClient.newBuilder().sslContext(Pinning.to(fingerprint)).build()) {
            HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(target)
                    .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream body = r.body()) {
                if (r.statusCode() != 200) {
                    String text = new String(body.readAllBytes(), StandardCharsets.UTF_8);
                    JsonNode error = parse(text);
                    throw new Failure(error.path("message").asText(text) + " (HTTP " + r.statusCode() + ")");
                }
                byte[] buffer = new byte[8192];
                for (int n; (n = body.read(buffer)) > 0; ) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
        } catch (GeneralSecurityException e) {
            throw new Failure("cannot set up TLS: " + e.getMessage());
        } catch (javax.net.ssl.SSLHandshakeException e) {
            throw new Failure("the agent at " + target.getAuthority() + " is not the one its Node names: " + e.getMessage());
        } catch (IOException e) {
            throw new Failure("cannot reach the agent at " + target.getAuthority() + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure("interrupted");
        }
    }

    /** The node's InternalIP, else ExternalIP; a node that lists none (a local cluster) is the API server's host. */
    static String address(Node node, Config config) {
        List<String> addresses = AgentApi.addresses(node);
        if (addresses.isEmpty()) {
            return URI.create(config.getMasterUrl()).getHost();
        }
        String a = addresses.getFirst();
        return a.contains(":") ? "[" + a + "]" : a;
    }

    private static JsonNode parse(String text) {
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            return JSON.createObjectNode();
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
