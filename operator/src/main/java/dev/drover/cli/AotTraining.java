package dev.drover.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The training run that the build records {@code kubectl drover}'s ahead-of-time cache from ({@code
 * operator/bin/kubectl-drover} with {@code DROVER_AOT_TRAIN}): the plugin's real calls (status, stats, logs, signal,
 * restart, help and a misuse; a token, and a client certificate) on its own kube client against a fake API server over TLS in this process, so the classes a user's call loads,
 * links and compiles are the ones in the cache, without any cluster. Its output is thrown away. The server's key
 * comes from keytool (the JDK's own classes only): every class in the cache is loaded at each start, so the training
 * loads nothing a user's call would not, such as a certificate library.
 */
public final class AotTraining {

    private static final String ALLOC = """
            {"apiVersion": "drover.dev/v1alpha1", "kind": "Allocation",
             "metadata": {"name": "train", "namespace": "default", "uid": "u-1",
                          "creationTimestamp": "2026-01-01T00:00:00Z", "generation": 1},
             "spec": {"nodeName": "local", "tasks": [{"name": "web", "driver": "mock", "leader": true}]},
             "status": {"clientStatus": "Running", "clientDescription": "Tasks are running", "ready": "1/1",
                        "conditions": [{"type": "Ready", "status": "True", "reason": "TasksRunning",
                                        "lastTransitionTime": "2026-01-01T00:00:01Z"}],
                        "taskStates": {"web": {"state": "Running", "restarts": 0,
                                               "startedAt": "2026-01-01T00:00:01.5Z",
                                               "events": [{"type": "Started", "time": "2026-01-01T00:00:01.5Z",
                                                           "message": "Task started by client"}]}}}}
            """;
    private static final String EVENTS = """
            {"apiVersion": "v1", "kind": "EventList", "metadata": {}, "items": [
              {"metadata": {"name": "train.1", "namespace": "default"}, "reason": "Started", "type": "Normal",
               "message": "Task web: Task started by client", "count": 1,
               "involvedObject": {"kind": "Allocation", "name": "train", "uid": "u-1"},
               "firstTimestamp": "2026-01-01T00:00:01Z", "lastTimestamp": "2026-01-01T00:00:01Z"}]}
            """;
    private static final String STATS = """
            {"allocation": "default/train", "node": "local", "windowSeconds": 0.25,
             "resourceUsage": {"cpu": {"seconds": 1.5, "percent": 2.0}, "memory": {"rssBytes": 4194304}},
             "tasks": {"web": {"state": "Running",
                               "resourceUsage": {"cpu": {"seconds": 1.5, "percent": 2.0},
                                                 "memory": {"rssBytes": 4194304}}}}}
            """;

    private AotTraining() {}

    public static void main(String[] args) throws Exception {
        CliLogging.configure(List.of(), java.util.Map.of()); // as a user's call: no logback
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: AotTraining KEYSTORE.p12 PASSWORD (a key pair for 127.0.0.1)");
        }
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(Path.of(args[0]))) {
            store.load(in, args[1].toCharArray());
        }
        X509Certificate certificate =
                (X509Certificate) store.getCertificate(store.aliases().nextElement());
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, args[1].toCharArray());
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(keys.getKeyManagers(), null, null);
        // the JDK's own server, not the agent's Jetty: its classes land in the cache too, 57 of them against 400-odd
        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        server.createContext("/", AotTraining::answer);
        server.start();
        Path dir = Files.createTempDirectory("kubectl-drover-training");
        try {
            Path kubeconfig = dir.resolve("kubeconfig");
            String ca = Base64.getEncoder()
                    .encodeToString(("-----BEGIN CERTIFICATE-----\n"
                                    + Base64.getMimeEncoder().encodeToString(certificate.getEncoded())
                                    + "\n-----END CERTIFICATE-----\n")
                            .getBytes(StandardCharsets.US_ASCII));
            Files.writeString(kubeconfig, """
                    apiVersion: v1
                    kind: Config
                    clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", certificate-authority-data: %s}}]
                    users: [{name: u, user: {token: training}}]
                    contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]
                    current-context: x
                    """.formatted(server.getAddress().getPort(), ca));
            String k = kubeconfig.toString();
            // a user with a client certificate (the server's own pair: it asks for none, but the key is read)
            Path withCertificate = dir.resolve("kubeconfig-certificate");
            String key = Base64.getEncoder()
                    .encodeToString(("-----BEGIN PRIVATE KEY-----\n"
                                    + Base64.getMimeEncoder()
                                            .encodeToString(
                                                    store.getKey(store.aliases().nextElement(), args[1].toCharArray())
                                                            .getEncoded())
                                    + "\n-----END PRIVATE KEY-----\n")
                            .getBytes(StandardCharsets.US_ASCII));
            Files.writeString(withCertificate, """
                    clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", certificate-authority-data: %s}}]
                    users: [{name: u, user: {client-certificate-data: %s, client-key-data: %s}}]
                    contexts: [{name: x, context: {cluster: c, user: u}}]
                    current-context: x
                    """.formatted(server.getAddress().getPort(), ca, ca, key));
            PrintStream none = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
            List<String[]> calls = List.of(
                    new String[] {"--help"},
                    new String[] {"logs", "--help"},
                    new String[] {"status", "train", "--colour"},
                    new String[] {"status", "train", "--kubeconfig", k},
                    new String[] {"stats", "train", "--kubeconfig", k},
                    new String[] {"stats", "train", "--json", "--kubeconfig", k},
                    new String[] {"logs", "train", "web", "--tail", "5", "--kubeconfig", k},
                    new String[] {"signal", "train", "web", "HUP", "--kubeconfig", k},
                    new String[] {"restart", "train", "--kubeconfig", k},
                    new String[] {"status", "gone", "--kubeconfig", k},
                    new String[] {"status", "train", "--kubeconfig", withCertificate.toString()},
                    new String[] {"version", "--client"},
                    new String[] {PluginCommandLine.COMPLETE, "st"},
                    new String[] {PluginCommandLine.COMPLETE, "status", "--kubeconfig", k, ""});
            for (int round = 0; round < 3; round++) { // a few rounds: the JIT's profiles are recorded too
                for (String[] call : calls) {
                    KubectlDrover.run(call, new ByteArrayInputStream(new byte[0]), none, none);
                }
            }
        } finally {
            server.stop(0);
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    /** The few answers the calls above need; anything else is a 404 as the API server's. */
    private static void answer(HttpExchange x) throws IOException {
        String path = x.getRequestURI().getPath();
        String method = x.getRequestMethod();
        x.getRequestBody().readAllBytes();
        String alloc = "/apis/drover.dev/v1alpha1/namespaces/default/allocations/train";
        String agent = "/apis/agent.drover.dev/v1alpha1/namespaces/default/allocations/train/";
        String body;
        int code = 200;
        if (path.equals(alloc)) {
            body = ALLOC;
        } else if (path.equals("/api/v1/namespaces/default/events")) {
            body = EVENTS;
        } else if (path.equals(agent + "stats")) {
            body = STATS;
        } else if (path.equals(agent + "log")) {
            body = "line one\nline two\n";
        } else if (path.equals(agent + "signal") && method.equals("POST")) {
            body = "{\"message\": \"sent SIGHUP to task web\"}";
        } else if (path.equals("/apis/authentication.k8s.io/v1/selfsubjectreviews")) {
            body = "{\"apiVersion\": \"authentication.k8s.io/v1\", \"kind\": \"SelfSubjectReview\","
                    + " \"status\": {\"userInfo\": {\"username\": \"training\"}}}";
            code = 201;
        } else {
            code = 404;
            body = "{\"kind\": \"Status\", \"apiVersion\": \"v1\", \"status\": \"Failure\", \"reason\": \"NotFound\","
                    + " \"code\": 404, \"message\": \"allocations.drover.dev \\\"gone\\\" not found\"}";
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().set("Content-Type", path.endsWith("/log") ? "text/plain" : "application/json");
        x.sendResponseHeaders(code, bytes.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(bytes);
        }
    }
}
