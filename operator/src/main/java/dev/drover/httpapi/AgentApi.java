package dev.drover.httpapi;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.drover.api.v1alpha1.Names;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's HTTPS API, which reads what only the node has:
 * {@code GET /v1/allocations/NAMESPACE/NAME/logs/TASK?stream=stdout|stderr&tail=N&follow=true}
 * streams a task's output (the last N lines, or all, then what it writes next
 * until it is dead or the caller hangs up). Every request is authenticated and
 * authorized by {@link KubernetesAuth} ({@code get} on {@code allocations/log});
 * errors are JSON {@code {"message": ...}} with their HTTP status.
 */
public final class AgentApi implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentApi.class);
    /** On the Node: the port of the agent's HTTPS API, and the SHA-256 of its certificate, which clients pin. */
    public static final String PORT_ANNOTATION = "drover.dev/agent-api-port";
    public static final String CERTIFICATE_ANNOTATION = "drover.dev/agent-certificate-sha256";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern LOGS = Pattern.compile("^/v1/allocations/([^/]+)/([^/]+)/logs/([^/]+)$");
    static final Duration FOLLOW_POLL = Duration.ofMillis(250);

    /** What the API needs of an allocation this agent runs. */
    public record Local(Path logsDir, Set<String> tasks, Predicate<String> taskDead) {
    }

    /** The allocations this agent runs. */
    public interface Allocations {
        Optional<Local> find(AllocId id);
    }

    private final HttpsServer server;
    private final ExecutorService executor;
    private final KubernetesAuth auth;
    private final Allocations allocations;
    private final String node;
    private volatile boolean closed;

    private AgentApi(HttpsServer server, ExecutorService executor, KubernetesAuth auth, Allocations allocations,
                     String node) {
        this.server = server;
        this.executor = executor;
        this.auth = auth;
        this.allocations = allocations;
        this.node = node;
    }

    /** Serves on {@code address} (port 0: a free one) with {@code tls}; requests run on virtual threads. */
    public static AgentApi start(InetSocketAddress address, SSLContext tls, KubernetesAuth auth,
                                 Allocations allocations, String node) throws IOException {
        HttpsServer server = HttpsServer.create(address, 64);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        server.setExecutor(executor);
        AgentApi api = new AgentApi(server, executor, auth, allocations, node);
        server.createContext("/", api::handle);
        server.start();
        return api;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /**
     * Where clients dial a node's agent: its {@code InternalIP} addresses, then its {@code ExternalIP} ones, as the
     * Node lists them (the certificate names them all).
     */
    public static List<String> addresses(Node node) {
        List<NodeAddress> all = node.getStatus() == null || node.getStatus().getAddresses() == null ? List.of()
                : node.getStatus().getAddresses();
        List<String> out = new ArrayList<>();
        for (String type : List.of("InternalIP", "ExternalIP")) {
            for (NodeAddress a : all) {
                if (type.equals(a.getType()) && a.getAddress() != null) {
                    out.add(a.getAddress());
                }
            }
        }
        return out;
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getRawPath();
            Matcher m = LOGS.matcher(path);
            if (!m.matches()) {
                error(ex, 404, "no such API path " + path + "; GET /v1/allocations/NAMESPACE/NAME/logs/TASK");
                return;
            }
            if (!ex.getRequestMethod().equals("GET")) {
                error(ex, 405, ex.getRequestMethod() + " is not served; use GET");
                return;
            }
            String namespace = decode(m.group(1));
            String name = decode(m.group(2));
            String task = decode(m.group(3));
            if (!Names.isLabel(namespace) || !Names.isSubdomain(name) || !Names.isLabel(task)) {
                error(ex, 400, "\"" + namespace + "/" + name + "\" task \"" + task + "\" is not a valid allocation"
                        + " and task name");
                return;
            }
            Map<String, String> query = query(ex.getRequestURI().getRawQuery());
            String stream = query.getOrDefault("stream", "stdout");
            boolean follow = Boolean.parseBoolean(query.getOrDefault("follow", "false"));
            int tail;
            try {
                tail = Integer.parseInt(query.getOrDefault("tail", "-1"));
            } catch (NumberFormatException e) {
                error(ex, 400, "tail must be a whole number of lines, not \"" + query.get("tail") + "\"");
                return;
            }
            if (!stream.equals("stdout") && !stream.equals("stderr")) {
                error(ex, 400, "stream must be stdout or stderr, not \"" + stream + "\"");
                return;
            }
            KubernetesAuth.Decision decision = auth.check(ex.getRequestHeaders().getFirst("Authorization"), namespace,
                    name, "log");
            if (decision instanceof KubernetesAuth.Decision.Refused r) {
                error(ex, r.status(), r.message());
                return;
            }
            Optional<Local> local = allocations.find(new AllocId(namespace, name));
            if (local.isEmpty()) {
                error(ex, 404, "allocation " + namespace + "/" + name + " does not run on node " + node);
                return;
            }
            if (!local.get().tasks().contains(task)) {
                error(ex, 404, "allocation " + namespace + "/" + name + " has no task \"" + task + "\"");
                return;
            }
            logs(ex, local.get(), task, stream, tail, follow);
        } catch (IOException clientGone) {
            LOG.debug("API client went away: {}", clientGone.toString());
        }
    }

    private void logs(HttpExchange ex, Local local, String task, String stream, int tail, boolean follow)
            throws IOException {
        LogFiles files = new LogFiles(local.logsDir(), task, stream);
        ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        ex.sendResponseHeaders(200, 0);
        try (OutputStream out = ex.getResponseBody()) {
            long position = files.tail(tail, out);
            if (follow) {
                files.follow(position, out, () -> closed || local.taskDead().test(task), FOLLOW_POLL);
            }
        }
    }

    private static void error(HttpExchange ex, int status, String message) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status);
        body.put("message", message);
        byte[] bytes = JSON.writeValueAsBytes(body);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        ex.getResponseBody().write(bytes);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> out = new LinkedHashMap<>();
        if (raw != null) {
            for (String pair : raw.split("&")) {
                int eq = pair.indexOf('=');
                out.put(decode(eq < 0 ? pair : pair.substring(0, eq)), eq < 0 ? "" : decode(pair.substring(eq + 1)));
            }
        }
        return out;
    }

    /** Stops serving: followed logs end, connections close. Joins the request threads. */
    @Override
    public void close() {
        closed = true;
        server.stop(0);
        executor.shutdownNow();
        executor.close();
    }
}
