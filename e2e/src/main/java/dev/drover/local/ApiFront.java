package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP front kubectl talks to. It answers what fabric8's CRUD mock server
 * cannot (discovery, OpenAPI, tables, streaming watches, field selectors,
 * strict field validation, schema defaults, finalizers) and passes everything
 * else to the mock, which stores the objects.
 */
final class ApiFront implements HttpHandler {

    private static final Logger LOG = LoggerFactory.getLogger(ApiFront.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MERGE_PATCH = "application/merge-patch+json";

    private final String backendBase;
    private final KubernetesClient backend;
    private final Catalog catalog;
    private final Discovery discovery;
    private final OpenApi openApi;
    private final Clock clock;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final RecentDeletions deletions = new RecentDeletions();

    ApiFront(String backendBase, KubernetesClient backend, Catalog catalog, Clock clock) {
        this.backendBase = backendBase;
        this.backend = backend;
        this.catalog = catalog;
        this.discovery = new Discovery(catalog);
        this.openApi = new OpenApi(catalog);
        this.clock = clock;
    }

    /** Ends open watch streams; new requests are still answered until the server stops. */
    void stop() {
        stopping.set(true);
        http.close();
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try {
            route(exchange);
        } catch (ApiError e) {
            status(exchange, e.code, e.reason, e.getMessage());
        } catch (IOException e) {
            LOG.debug("client went away: {}", e.toString());
        } catch (RuntimeException e) {
            LOG.warn("{} {} failed", exchange.getRequestMethod(), exchange.getRequestURI(), e);
            status(exchange, 500, "InternalError", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            status(exchange, 503, "ServiceUnavailable", "server is shutting down");
        } finally {
            exchange.close(); // after the catch blocks: they still answer on it
        }
    }

    private void route(HttpExchange ex) throws IOException, InterruptedException {
        String method = ex.getRequestMethod();
        String path = ex.getRequestURI().getRawPath();
        Query query = Query.parse(ex.getRequestURI().getRawQuery());
        LOG.debug("{} {} {}", method, ex.getRequestURI(), ex.getRequestHeaders().getFirst("Content-Type"));
        if (method.equals("GET")) {
            JsonNode fixed = fixedDocument(path);
            if (fixed != null) {
                send(ex, 200, fixed);
                return;
            }
        }
        ResourcePath rp = ResourcePath.parse(path);
        ResourceType type = rp == null ? null : catalog.find(rp.group(), rp.version(), rp.plural());
        if (type == null) {
            forward(ex, method, path, query.without(), body(ex), ex.getRequestHeaders().getFirst("Content-Type"));
            return;
        }
        switch (method) {
            case "GET" -> get(ex, type, rp, query);
            case "POST" -> write(ex, "POST", type, rp, query);
            case "PUT" -> write(ex, "PUT", type, rp, query);
            case "PATCH" -> write(ex, "PATCH", type, rp, query);
            case "DELETE" -> delete(ex, type, rp, query);
            default -> throw new ApiError(405, "MethodNotAllowed", "method " + method + " is not supported");
        }
    }

    private JsonNode fixedDocument(String path) {
        switch (path) {
            case "/version" -> {
                return JSON.createObjectNode().put("major", "1").put("minor", "32")
                        .put("gitVersion", "v1.32.0-drover-local").put("platform", "linux/amd64");
            }
            case "/healthz", "/readyz", "/livez" -> {
                return JSON.getNodeFactory().textNode("ok");
            }
            case "/openapi/v3" -> {
                return openApi.root();
            }
            default -> {
                if (path.startsWith("/openapi/v3/")) {
                    JsonNode doc = openApi.document(path);
                    if (doc == null) {
                        throw new ApiError(404, "NotFound", "no OpenAPI document at " + path);
                    }
                    return doc;
                }
                if (path.startsWith("/openapi/v2")) {
                    throw new ApiError(404, "NotFound", "OpenAPI v2 is not served; use /openapi/v3");
                }
                return discovery.document(path);
            }
        }
    }

    private void get(HttpExchange ex, ResourceType type, ResourcePath rp, Query query)
            throws IOException, InterruptedException {
        if (query.isWatch()) {
            if ("websocket".equalsIgnoreCase(ex.getRequestHeaders().getFirst("Upgrade"))) {
                // The JDK server cannot hand over the socket for a websocket; a fabric8 client whose upgrade
                // is answered 200 falls back to an HTTP streaming watch at once, so default settings work.
                throw new ApiError(200, "WebsocketNotServed", "websocket watches are not served; use HTTP streaming");
            }
            boolean table = Tables.wanted(ex.getRequestHeaders().getFirst("Accept"));
            WatchStream.serve(ex, backend, type, rp, query, table ? clock : null, stopping::get, deletions.of(type));
            return;
        }
        FieldSelector selector;
        try {
            selector = FieldSelector.parse(query.get("fieldSelector"));
        } catch (IllegalArgumentException e) {
            throw new ApiError(400, "BadRequest", e.getMessage());
        }
        HttpResponse<byte[]> response = call("GET", rp.name() == null ? rp.collectionPath() : pathOf(rp),
                query.without("fieldSelector", "watch"), null, null);
        if (response.statusCode() != 200) {
            relay(ex, response);
            return;
        }
        JsonNode body = JSON.readTree(response.body());
        if (rp.name() == null && body instanceof ObjectNode list && "List".equals(list.path("kind").asText())) {
            list.put("kind", type.kind() + "List").put("apiVersion", type.groupVersion()); // typed, as clients decode it
        }
        if (rp.name() == null && body.has("items") && !selector.isEmpty()) {
            ArrayNode kept = JSON.createArrayNode();
            body.get("items").forEach(item -> {
                if (selector.matches(item)) {
                    kept.add(item);
                }
            });
            ((ObjectNode) body).set("items", kept);
        }
        if (Tables.wanted(ex.getRequestHeaders().getFirst("Accept"))) {
            send(ex, 200, Tables.table(type, body, Instant.now(clock)));
        } else {
            send(ex, 200, body);
        }
    }

    private void write(HttpExchange ex, String requestMethod, ResourceType type, ResourcePath rp, Query query)
            throws IOException, InterruptedException {
        String method = requestMethod;
        byte[] raw = body(ex);
        String contentType = ex.getRequestHeaders().getFirst("Content-Type");
        boolean jsonPatch = contentType != null && contentType.contains("json-patch");
        if (contentType != null && contentType.contains("strategic-merge-patch")) {
            contentType = MERGE_PATCH; // no strategic merge here: list fields are replaced whole
        }
        boolean statusWrite = "status".equals(rp.subresource());
        if (type.schema() != null && !jsonPatch && raw.length > 0) {
            JsonNode body = JSON.readTree(raw);
            if (!method.equals("PATCH")) {
                SchemaValidator.applyDefaults(body, type.schema());
                raw = JSON.writeValueAsBytes(body);
            }
            SchemaValidator.Result result = SchemaValidator.validate(body, type.schema(), !method.equals("PATCH") && !statusWrite);
            if (!result.unknownFields().isEmpty() && "Strict".equals(query.get("fieldValidation"))) {
                throw new ApiError(400, "BadRequest", type.kind() + " in version \"" + type.version()
                        + "\" cannot be handled as a " + type.kind() + ": strict decoding error: "
                        + String.join(", ", result.unknownFields().stream().map(f -> "unknown field \"" + f + "\"").toList()));
            }
            if (!result.invalid().isEmpty()) {
                String name = rp.name() != null ? rp.name() : body.path("metadata").path("name").asText("");
                throw new ApiError(422, "Invalid", type.kind() + "." + type.group() + " \"" + name + "\" is invalid: "
                        + String.join(", ", result.invalid()));
            }
        }
        if (method.equals("PATCH") && statusWrite && type.group().isEmpty() && type.plural().equals("nodes")) {
            // As a real API server's node status strategy: a status write may change metadata (labels, as
            // Drover's agent sets them) and status, never spec. The store would keep only status.
            HttpResponse<byte[]> current = call("GET", rp.objectPath(), "", null, null);
            if (current.statusCode() != 200) {
                relay(ex, current);
                return;
            }
            ObjectNode node = (ObjectNode) JSON.readTree(current.body());
            JsonNode patched = Patches.apply(node, JSON.readTree(raw), jsonPatch);
            if (patched instanceof ObjectNode result) {
                if (node.has("spec")) {
                    result.set("spec", node.get("spec"));
                }
                relay(ex, call("PUT", rp.objectPath(), "", JSON.writeValueAsBytes(result), "application/json"));
                return;
            }
        }
        String target = method.equals("POST") ? rp.collectionPath() : pathOf(rp);
        // The store deletes an object whose last finalizer goes and then answers with no body;
        // a real API server answers with the object, so keep it to answer with.
        HttpResponse<byte[]> before = method.equals("POST") || statusWrite ? null : call("GET", target, "", null, null);
        if (method.equals("PATCH") && !statusWrite && type.statusSubresource() && before.statusCode() == 200) {
            // The store mishandles patches that touch status on the main resource; patch here, keep the stored
            // status as a real API server does, and store the result whole.
            ObjectNode current = (ObjectNode) JSON.readTree(before.body());
            JsonNode patched = Patches.apply(current, JSON.readTree(raw), jsonPatch);
            if (patched instanceof ObjectNode result) {
                if (current.has("status")) {
                    result.set("status", current.get("status"));
                } else {
                    result.remove("status");
                }
                method = "PUT";
                raw = JSON.writeValueAsBytes(result);
                contentType = "application/json";
            }
        }
        HttpResponse<byte[]> response = call(method, target, "", raw, contentType);
        if (type.plural().equals("customresourcedefinitions")) {
            catalog.invalidate();
        }
        int code = response.statusCode() == 202 ? 200 : response.statusCode();
        if (code == 200 && response.body().length == 0 && before != null && before.statusCode() == 200) {
            ObjectNode gone = (ObjectNode) JSON.readTree(before.body());
            ((ObjectNode) gone.path("metadata")).putArray("finalizers");
            deletions.record(type, gone);
            send(ex, 200, gone);
            return;
        }
        relay(ex, code, response);
    }

    private void delete(HttpExchange ex, ResourceType type, ResourcePath rp, Query query)
            throws IOException, InterruptedException {
        if (rp.name() == null) {
            forward(ex, "DELETE", rp.collectionPath(), query.without(), body(ex), ex.getRequestHeaders().getFirst("Content-Type"));
            return;
        }
        HttpResponse<byte[]> current = call("GET", rp.objectPath(), "", null, null);
        if (current.statusCode() == 200) {
            JsonNode object = JSON.readTree(current.body());
            JsonNode meta = object.path("metadata");
            if (!meta.path("finalizers").isEmpty()) {
                if (meta.has("deletionTimestamp")) {
                    send(ex, 200, object);
                    return;
                }
                ObjectNode patch = JSON.createObjectNode();
                patch.putObject("metadata").put("deletionTimestamp", Instant.now(clock).truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString())
                        .put("deletionGracePeriodSeconds", 0);
                HttpResponse<byte[]> marked = call("PATCH", rp.objectPath(), "", JSON.writeValueAsBytes(patch), MERGE_PATCH);
                relay(ex, marked.statusCode() == 202 ? 200 : marked.statusCode(), marked);
                return;
            }
        }
        if (type.plural().equals("customresourcedefinitions")) {
            catalog.invalidate();
        }
        HttpResponse<byte[]> response = call("DELETE", rp.objectPath(), "", body(ex), ex.getRequestHeaders().getFirst("Content-Type"));
        if (response.statusCode() / 100 == 2 && current.statusCode() == 200) {
            deletions.record(type, JSON.readTree(current.body()));
        }
        relay(ex, response);
    }

    private static String pathOf(ResourcePath rp) {
        return rp.subresource() == null ? rp.objectPath() : rp.objectPath() + "/" + rp.subresource();
    }

    private void forward(HttpExchange ex, String method, String path, String query, byte[] body, String contentType)
            throws IOException, InterruptedException {
        relay(ex, call(method, path, query, body, contentType));
    }

    private HttpResponse<byte[]> call(String method, String path, String query, byte[] body, String contentType)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(backendBase + path + (query.isEmpty() ? "" : "?" + query)))
                .header("Accept", "application/json");
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        b.method(method, body == null || body.length == 0 ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static byte[] body(HttpExchange ex) throws IOException {
        return ex.getRequestBody().readAllBytes();
    }

    private static void relay(HttpExchange ex, HttpResponse<byte[]> response) throws IOException {
        relay(ex, response.statusCode(), response);
    }

    private static void relay(HttpExchange ex, int code, HttpResponse<byte[]> response) throws IOException {
        ex.getResponseHeaders().set("Content-Type",
                response.headers().firstValue("Content-Type").orElse("application/json"));
        byte[] body = response.body();
        ex.sendResponseHeaders(code, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private static void send(HttpExchange ex, int code, JsonNode body) throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(code, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static void status(HttpExchange ex, int code, String reason, String message) {
        ObjectNode s = JSON.createObjectNode().put("kind", "Status").put("apiVersion", "v1");
        s.putObject("metadata");
        s.put("status", "Failure").put("message", message).put("reason", reason).put("code", code);
        try {
            send(ex, code, s);
        } catch (IOException e) {
            LOG.debug("could not send error {}: {}", code, e.toString());
        }
    }

    /** An error answered as a Kubernetes Status. */
    static final class ApiError extends RuntimeException {
        final int code;
        final String reason;

        ApiError(int code, String reason, String message) {
            super(message);
            this.code = code;
            this.reason = reason;
        }
    }
}
