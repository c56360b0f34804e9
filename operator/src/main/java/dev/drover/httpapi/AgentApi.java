package dev.drover.httpapi;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.drover.api.v1alpha1.Names;
import dev.drover.devices.DeviceStats;
import dev.drover.driver.DriverException;
import dev.drover.driver.TaskStats;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's HTTPS API, which reads what only the node has, for one allocation this agent runs:
 * <ul>
 * <li>{@code GET /v1/allocations/NAMESPACE/NAME/logs/TASK?stream=stdout|stderr&tail=N&follow=true}: a task's
 * output (the last N lines, or all, then what it writes next until it is dead or the caller hangs up);
 * <li>{@code GET /v1/allocations/NAMESPACE/NAME/stats}: CPU, memory and device usage per task and for the whole
 * allocation ({@link UsageReport});
 * <li>{@code GET /v1/allocations/NAMESPACE/NAME/snapshot}: the ephemeral disk as a tar stream, which an agent on
 * another node downloads to migrate it.
 * </ul>
 * Every request is authenticated and authorized by {@link KubernetesAuth} ({@code get} on the virtual
 * subresources {@code allocations/log}, {@code allocations/stats} and {@code allocations/snapshot}); errors are
 * JSON {@code {"status": ..., "message": ...}} with their HTTP status. Followed logs are bounded in total and per
 * caller ({@link ApiLimits}), and one whose client hung up ends within {@link #PEER_CHECK}.
 */
public final class AgentApi implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentApi.class);
    /** On the Node: the port of the agent's HTTPS API, and the SHA-256 of its certificate, which clients pin. */
    public static final String PORT_ANNOTATION = "drover.dev/agent-api-port";
    public static final String CERTIFICATE_ANNOTATION = "drover.dev/agent-certificate-sha256";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern ROUTE =
            Pattern.compile("^/v1/allocations/([^/]+)/([^/]+)/(?:logs/([^/]+)|(stats)|(snapshot))$");
    private static final String ROUTES = "GET /v1/allocations/NAMESPACE/NAME/{logs/TASK,stats,snapshot}";
    static final Duration FOLLOW_POLL = Duration.ofMillis(250);
    /** How often a follow with nothing to send asks whether its client is still there. */
    static final Duration PEER_CHECK = Duration.ofSeconds(2);
    /** What a caller refused a follow is told to wait: follows of others end as their tasks do, at any time. */
    static final Duration FOLLOW_RETRY = Duration.ofSeconds(10);
    /** Between the two readings of a task's CPU time from which its CPU percentage comes. */
    static final Duration STATS_WINDOW = Duration.ofMillis(250);

    /** What the API reads of an allocation this agent runs. */
    public interface Local {

        /** The allocation's tasks, in spec order. */
        List<String> tasks();

        /** Whether the task is dead for good (a followed log ends). */
        boolean dead(String task);

        /** The task's state as its status shows it ({@code Pending}, {@code Running}, {@code Dead}). */
        String state(String task);

        /** The shared log directory ({@code alloc/logs}). */
        Path logsDir();

        /** The task's usage now; empty when it is not running. */
        Optional<TaskStats> stats(String task) throws DriverException, InterruptedException;

        /** The allocation's reserved devices' latest statistics. */
        DeviceStats.AllocationStats devices();

        /** Writes the ephemeral disk as a tar stream. */
        void snapshot(OutputStream out) throws IOException;
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
    private final Clock clock;
    private final Duration statsWindow;
    private final Followers followers;
    private final TcpConnections connections;
    private volatile boolean closed;

    private AgentApi(HttpsServer server, ExecutorService executor, KubernetesAuth auth, Allocations allocations,
                     String node, Clock clock, Duration statsWindow, ApiLimits limits) {
        this.server = server;
        this.followers = new Followers(limits);
        this.connections = new TcpConnections(server.getAddress().getPort());
        this.executor = executor;
        this.auth = auth;
        this.allocations = allocations;
        this.node = node;
        this.clock = clock;
        this.statsWindow = statsWindow;
    }

    /**
     * Serves on {@code address} (port 0: a free one) with {@code tls}, within {@code limits}; requests run on
     * virtual threads.
     */
    public static AgentApi start(InetSocketAddress address, SSLContext tls, KubernetesAuth auth,
                                 Allocations allocations, String node, ApiLimits limits) throws IOException {
        return start(address, tls, auth, allocations, node, Clock.systemUTC(), STATS_WINDOW, limits);
    }

    static AgentApi start(InetSocketAddress address, SSLContext tls, KubernetesAuth auth, Allocations allocations,
                          String node, Clock clock, Duration statsWindow, ApiLimits limits) throws IOException {
        HttpsServer server = HttpsServer.create(address, 64);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        server.setExecutor(executor);
        AgentApi api = new AgentApi(server, executor, auth, allocations, node, clock, statsWindow, limits);
        server.createContext("/", api::handle);
        server.start();
        return api;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** How many followed logs are served now. */
    int followers() {
        return followers.count();
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

    private void handle(HttpExchange ex) {
        try (ex) {
            try {
                serve(ex);
            } catch (RuntimeException e) {
                // a bug, not the client's doing: say so rather than drop the connection without a word
                LOG.warn("API request {} failed", ex.getRequestURI(), e);
                if (ex.getResponseCode() < 0) {
                    error(ex, 500, "the agent failed to answer: " + e);
                }
            }
        } catch (IOException clientGone) {
            LOG.debug("API client went away: {}", clientGone.toString());
        }
    }

    private void serve(HttpExchange ex) throws IOException {
        try {
            String path = ex.getRequestURI().getRawPath();
            Matcher m = ROUTE.matcher(path);
            if (!m.matches()) {
                error(ex, 404, "no such API path " + path + "; " + ROUTES);
                return;
            }
            if (!ex.getRequestMethod().equals("GET")) {
                error(ex, 405, ex.getRequestMethod() + " is not served; use GET");
                return;
            }
            String namespace = decode(m.group(1), false);
            String name = decode(m.group(2), false);
            String task = m.group(3) == null ? null : decode(m.group(3), false);
            String subresource = task != null ? "log" : m.group(4) != null ? "stats" : "snapshot";
            if (!Names.isLabel(namespace) || !Names.isSubdomain(name)) {
                error(ex, 400, "\"" + namespace + "/" + name + "\" is not a valid allocation name");
                return;
            }
            if (task != null && !Names.isLabel(task)) {
                error(ex, 400, "\"" + task + "\" is not a valid task name");
                return;
            }
            Map<String, String> query = query(ex.getRequestURI().getRawQuery());
            LogRequest logRequest = null;
            if (task != null) {
                Optional<String> problem = LogRequest.problem(query);
                if (problem.isPresent()) {
                    error(ex, 400, problem.get());
                    return;
                }
                logRequest = LogRequest.of(task, query);
            }
            KubernetesAuth.Decision decision = auth.check(ex.getRequestHeaders().getFirst("Authorization"),
                    ex.getRemoteAddress().getAddress(), namespace, name, subresource);
            if (decision instanceof KubernetesAuth.Decision.Refused r) {
                error(ex, r.status(), r.message(), r.retryAfter());
                return;
            }
            String caller = ((KubernetesAuth.Decision.Allowed) decision).caller().user();
            AllocId id = new AllocId(namespace, name);
            Optional<Local> local = allocations.find(id);
            if (local.isEmpty()) {
                error(ex, 404, "allocation " + id + " does not run on node " + node);
                return;
            }
            switch (subresource) {
                case "log" -> logs(ex, id, local.get(), logRequest, caller);
                case "stats" -> stats(ex, id, local.get());
                default -> snapshot(ex, id, local.get());
            }
        } catch (BadRequest e) {
            error(ex, 400, e.getMessage());
        }
    }

    /** A request target the API cannot read; its message says what is wrong with it. */
    private static final class BadRequest extends Exception {
        BadRequest(String message) {
            super(message, null, false, false);
        }
    }

    /** What a logs request asks for. */
    private record LogRequest(String task, String stream, int tail, boolean follow) {

        static Optional<String> problem(Map<String, String> query) {
            String stream = query.getOrDefault("stream", "stdout");
            if (!stream.equals("stdout") && !stream.equals("stderr")) {
                return Optional.of("stream must be stdout or stderr, not \"" + stream + "\"");
            }
            String tail = query.getOrDefault("tail", "-1");
            if (!tail.matches("-?[0-9]{1,9}")) {
                return Optional.of("tail must be a whole number of lines, not \"" + tail + "\"");
            }
            return Optional.empty();
        }

        static LogRequest of(String task, Map<String, String> query) {
            return new LogRequest(task, query.getOrDefault("stream", "stdout"),
                    Integer.parseInt(query.getOrDefault("tail", "-1")),
                    Boolean.parseBoolean(query.getOrDefault("follow", "false")));
        }
    }

    private void logs(HttpExchange ex, AllocId id, Local local, LogRequest request, String caller)
            throws IOException {
        if (!local.tasks().contains(request.task())) {
            error(ex, 404, "allocation " + id + " has no task \"" + request.task() + "\"");
            return;
        }
        LogFiles files = new LogFiles(local.logsDir(), request.task(), request.stream());
        if (!request.follow()) {
            ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
            ex.sendResponseHeaders(200, 0);
            try (OutputStream out = ex.getResponseBody()) {
                files.tail(request.tail(), out);
            }
            return;
        }
        Followers.Admission admission = followers.admit(caller);
        if (admission.slot().isEmpty()) {
            error(ex, 429, admission.refusal(), FOLLOW_RETRY);
            return;
        }
        try (Followers.Slot _ = admission.slot().get()) {
            ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
            ex.sendResponseHeaders(200, 0);
            try (OutputStream out = ex.getResponseBody()) {
                long position = files.tail(request.tail(), out);
                BooleanSupplier departed = peerGone(ex.getLocalAddress(), ex.getRemoteAddress());
                files.follow(position, out, () -> closed || local.dead(request.task()) || departed.getAsBoolean(),
                        FOLLOW_POLL);
            }
        }
    }

    /**
     * Whether the client of a follow hung up, asked of the kernel every {@link #PEER_CHECK}: a quiet task writes
     * nothing that would fail, so without asking the follow would last as long as its task.
     */
    private BooleanSupplier peerGone(InetSocketAddress local, InetSocketAddress remote) {
        long[] next = {System.nanoTime() + PEER_CHECK.toNanos()};
        return () -> {
            if (System.nanoTime() - next[0] < 0) {
                return false;
            }
            next[0] = System.nanoTime() + PEER_CHECK.toNanos();
            boolean gone = connections.peerGone(local, remote);
            if (gone) {
                LOG.debug("the client {} of a followed log hung up", remote);
            }
            return gone;
        };
    }

    private void stats(HttpExchange ex, AllocId id, Local local) throws IOException {
        byte[] body;
        try {
            body = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(
                    UsageReport.collect(id, node, local, clock, statsWindow));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error(ex, 503, "the agent is shutting down");
            return;
        }
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(200, body.length);
        ex.getResponseBody().write(body);
    }

    private void snapshot(HttpExchange ex, AllocId id, Local local) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "application/x-tar");
        ex.sendResponseHeaders(200, 0);
        try (OutputStream out = ex.getResponseBody()) {
            local.snapshot(out);
        } catch (IOException e) {
            // the stream ends without its end-of-archive blocks, which the reader refuses as cut short
            LOG.warn("snapshot of {} ended early: {}", id, e.toString());
            throw e;
        }
    }

    private static void error(HttpExchange ex, int status, String message) throws IOException {
        error(ex, status, message, Duration.ZERO);
    }

    /** {@code retryAfter}, when not zero, goes out as {@code Retry-After} in whole seconds. */
    private static void error(HttpExchange ex, int status, String message, Duration retryAfter) throws IOException {
        if (!retryAfter.isZero()) {
            ex.getResponseHeaders().set("Retry-After", Long.toString(Math.max(1, retryAfter.toSeconds())));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status);
        body.put("message", message);
        byte[] bytes = JSON.writeValueAsBytes(body);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        ex.getResponseBody().write(bytes);
    }

    /**
     * Percent-decodes a raw path segment or query part as UTF-8 ({@code +} is a space in the query only); a
     * malformed escape or bytes that are not UTF-8 are the caller's error. (The JDK's server refuses most malformed
     * escapes before a handler sees them; this does not count on it.)
     */
    private static String decode(String raw, boolean query) throws BadRequest {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                int hi = i + 2 < raw.length() ? hexDigit(raw.charAt(i + 1)) : -1;
                int lo = hi >= 0 ? hexDigit(raw.charAt(i + 2)) : -1;
                if (hi < 0 || lo < 0) {
                    throw new BadRequest("malformed % escape \"" + raw.substring(i, Math.min(raw.length(), i + 3))
                            + "\" in \"" + raw + "\": a % is followed by two hex digits (write % itself as %25)");
                }
                bytes.write(hi << 4 | lo);
                i += 2;
            } else if (c == '+' && query) {
                bytes.write(' ');
            } else {
                bytes.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new BadRequest("\"" + raw + "\" does not decode to UTF-8 text");
        }
    }

    /** 0 to 15 for an ASCII hex digit, else -1. */
    private static int hexDigit(char c) {
        return HexFormat.isHexDigit(c) ? HexFormat.fromHexDigit(c) : -1;
    }

    private static Map<String, String> query(String raw) throws BadRequest {
        Map<String, String> out = new LinkedHashMap<>();
        if (raw != null) {
            for (String pair : raw.split("&")) {
                int eq = pair.indexOf('=');
                out.put(decode(eq < 0 ? pair : pair.substring(0, eq), true),
                        eq < 0 ? "" : decode(pair.substring(eq + 1), true));
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
