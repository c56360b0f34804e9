package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.web.Exchange;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side of the local API server: discovery, OpenAPI, tables, streaming
 * watches, field and label selectors ({@link QuerySelectors}), and writes ({@link ObjectWrites}: schema,
 * defaults, admission, server-side apply), over the objects an {@link ObjectStore} keeps. Paths it does not
 * serve get 404, as from a real API server. Bodies come in through {@link RequestBodies}, answers and errors go out
 * through {@link ResponseWriters}.
 */
final class ApiFront implements Exchange.Handler {

    private static final Logger LOG = LoggerFactory.getLogger(ApiFront.class);
    private static final ObjectMapper JSON = NestingDepth.mapper();

    private final KubeVersion version;
    private final Authenticator authenticator;
    private final Authorizer authorizer;
    private final Impersonation impersonation;
    private final Admission admission;
    private final Aggregator aggregator;
    private final java.util.Map<ResourceType, Review> reviews;
    private final ObjectStore store;
    private final TokenRequests tokenRequests;
    private final Catalog catalog;
    private final Discovery discovery;
    private final OpenApi openApi;
    private final Clock clock;
    private final ObjectWrites writes;
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final WriteCounts writeCounts;

    /** What a request passes through before it reaches the store: who it is, what they may do, what may be written. */
    record Guards(
            Authenticator authenticator,
            Authorizer authorizer,
            Admission admission,
            java.util.Map<ResourceType, Review> reviews,
            CrdRules rules,
            Aggregator aggregator) {}

    ApiFront(
            ObjectStore store,
            Catalog catalog,
            Clock clock,
            KubeVersion version,
            Guards guards,
            TokenRequests tokenRequests,
            WriteCounts writeCounts) {
        this.version = version;
        this.writeCounts = writeCounts;
        this.tokenRequests = tokenRequests;
        this.authenticator = guards.authenticator();
        this.authorizer = guards.authorizer();
        this.impersonation = new Impersonation(authorizer);
        this.admission = guards.admission();
        this.aggregator = guards.aggregator();
        this.reviews = java.util.Map.copyOf(guards.reviews());
        this.store = store;
        this.catalog = catalog;
        this.discovery = new Discovery(catalog, guards.aggregator()::groupVersions, version.podResize());
        this.openApi = new OpenApi(catalog);
        this.clock = clock;
        this.writes =
                new ObjectWrites(store, clock, version, admission, guards.rules(), authorizer, this::catalogChanged);
    }

    /** Ends open watch streams; new requests are still answered until the server stops. */
    void stop() {
        stopping.set(true);
    }

    @Override
    public void handle(Exchange exchange) {
        try {
            route(exchange);
        } catch (ApiError e) {
            ResponseWriters.status(exchange, e);
        } catch (IOException e) {
            LOG.debug("client went away: {}", e.toString());
        } catch (RuntimeException e) {
            LOG.warn("{} {} failed", exchange.method(), exchange.target(), e);
            ResponseWriters.status(exchange, new ApiError(500, "InternalError", e.toString()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ResponseWriters.status(exchange, new ApiError(503, "ServiceUnavailable", "server is shutting down"));
        }
    }

    private void route(Exchange ex) throws IOException, InterruptedException {
        String method = ex.method();
        String path = ex.rawPath();
        Query query = Query.parse(ex.rawQuery());
        LOG.debug("{} {} {}", method, ex.target(), ex.header("Content-Type"));
        // as kube-apiserver's filters: authentication, then impersonation, then authorization of whom it acts as
        UserInfo user = impersonation.actingAs(authenticator.authenticate(ex.header("Authorization")), ex.headers());
        RequestInfo request = RequestInfo.of(method, path, query);
        writeCounts.count(user, request);
        Authorizer.Decision decision = authorizer.authorize(user, request);
        if (!decision.allowed()) {
            throw Forbidden.of(user, request, decision.reason());
        }
        ObjectNode aggregated = aggregator.serviceFor(path);
        if (aggregated != null) {
            aggregator.proxy(
                    ex,
                    aggregated,
                    user,
                    method.equals("GET") || method.equals("DELETE") ? new byte[0] : RequestBodies.body(ex));
            return;
        }
        if (method.equals("GET") && path.equals(WriteCounts.PATH)) {
            writeCounts.serve(ex); // Prometheus text, not JSON
            return;
        }
        MediaTypes.requireJson(ex.headers("Accept")); // after authorization, as kube-apiserver
        if (method.equals("GET")) {
            JsonNode fixed = fixedDocument(path);
            if (fixed != null) {
                ResponseWriters.send(ex, 200, fixed);
                return;
            }
        }
        ResourcePath rp = request.resource();
        ResourceType type = rp == null ? null : catalog.find(rp.group(), rp.version(), rp.plural());
        if (type == null) {
            throw new ApiError(404, "NotFound", "the server could not find the requested resource");
        }
        Review review = reviews.get(type);
        if (review != null) {
            if (!method.equals("POST") || rp.name() != null) {
                throw new ApiError(
                        405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
            }
            ResponseWriters.send(
                    ex,
                    201,
                    review.answer(RequestBodies.object(RequestBodies.body(ex), type.kind()), user, rp.namespace()));
            return;
        }
        if (type.equals(Catalog.SERVICE_ACCOUNTS) && "token".equals(rp.subresource())) {
            if (!method.equals("POST")) {
                throw new ApiError(
                        405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
            }
            // as kube-apiserver: authorized as create on serviceaccounts/token (above), then admitted, then minted
            ResponseWriters.send(
                    ex,
                    201,
                    tokenRequests.answer(
                            RequestBodies.object(RequestBodies.body(ex), "TokenRequest"),
                            rp.namespace(),
                            rp.name(),
                            user,
                            admission));
            return;
        }
        switch (method) {
            case "GET" -> get(ex, type, rp, query);
            case "POST" -> write(ex, "POST", type, rp, query, user);
            case "PUT" -> write(ex, "PUT", type, rp, query, user);
            case "PATCH" -> write(ex, "PATCH", type, rp, query, user);
            case "DELETE" -> delete(ex, type, rp, query, user);
            default -> throw new ApiError(405, "MethodNotAllowed", "method " + method + " is not supported");
        }
    }

    private JsonNode fixedDocument(String path) {
        switch (path) {
            case "/version" -> {
                return version.versionDocument();
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

    private void get(Exchange ex, ResourceType type, ResourcePath rp, Query query) throws IOException {
        checkPath(type, rp, false);
        if (rp.subresource() != null && (rp.name() == null || query.isWatch())) {
            throw new ApiError(
                    405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        }
        boolean table = Tables.wanted(ex.header("Accept"));
        if (query.isWatch()) {
            if ("websocket".equalsIgnoreCase(ex.header("Upgrade"))) {
                // The JDK server cannot hand over the socket for a websocket; a fabric8 client whose upgrade
                // is answered 200 falls back to an HTTP streaming watch at once, so default settings work.
                throw new ApiError(200, "WebsocketNotServed", "websocket watches are not served; use HTTP streaming");
            }
            WatchStream.serve(ex, store, type, rp, query, table ? clock : null, version.watchList(), stopping::get);
            return;
        }
        if (rp.name() != null) {
            ObjectNode object = store.get(type, rp.namespace(), rp.name());
            ResponseWriters.send(ex, 200, table ? Tables.table(type, object, Instant.now(clock)) : object);
            return;
        }
        FieldSelector fields = QuerySelectors.fieldSelector(type, query);
        LabelSelector labels = QuerySelectors.labelSelector(query);
        ObjectStore.Listing listing = store.list(type, rp.namespace());
        ObjectNode list =
                JSON.createObjectNode().put("apiVersion", type.groupVersion()).put("kind", type.kind() + "List");
        list.putObject("metadata").put("resourceVersion", Long.toString(listing.revision()));
        ArrayNode items = list.putArray("items");
        for (ObjectNode item : listing.items()) {
            if (fields.matches(item) && labels.matches(item)) {
                items.add(item);
            }
        }
        ResponseWriters.send(ex, 200, table ? Tables.table(type, list, Instant.now(clock)) : list);
    }

    private void write(Exchange ex, String method, ResourceType type, ResourcePath rp, Query query, UserInfo user)
            throws IOException {
        checkPath(type, rp, method.equals("POST"));
        if (method.equals("POST") && rp.subresource() != null) {
            throw new ApiError(
                    405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        }
        ObjectWrites.Request request = new ObjectWrites.Request(
                method,
                type,
                rp,
                query,
                user,
                RequestBodies.body(ex),
                ex.header("Content-Type"),
                ex.header("User-Agent"));
        ObjectWrites.Written written = writes.write(request);
        ResponseWriters.send(ex, written.code(), written.object());
    }

    private void delete(Exchange ex, ResourceType type, ResourcePath rp, Query query, UserInfo user)
            throws IOException {
        checkPath(type, rp, false);
        if (rp.subresource() != null) {
            throw new ApiError(
                    405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        }
        boolean dryRun = "All".equals(query.get("dryRun"));
        if (rp.name() != null) {
            admitDelete(type, rp.namespace(), store.get(type, rp.namespace(), rp.name()), user, dryRun);
            ObjectNode gone = store.delete(type, rp.namespace(), rp.name(), dryRun);
            catalogChanged(type);
            ResponseWriters.send(ex, 200, gone);
            return;
        }
        FieldSelector fields = QuerySelectors.fieldSelector(type, query);
        LabelSelector labels = QuerySelectors.labelSelector(query);
        ObjectNode list =
                JSON.createObjectNode().put("apiVersion", type.groupVersion()).put("kind", type.kind() + "List");
        ArrayNode items = list.putArray("items");
        for (ObjectNode item : store.list(type, rp.namespace()).items()) {
            if (fields.matches(item) && labels.matches(item)) {
                String namespace = rp.namespace() == null
                        ? item.path("metadata").path("namespace").asText(null)
                        : rp.namespace();
                admitDelete(type, namespace, item, user, dryRun);
                try {
                    items.add(store.delete(
                            type, namespace, item.path("metadata").path("name").asText(), dryRun));
                } catch (ApiError gone) {
                    // deleted meanwhile
                }
            }
        }
        catalogChanged(type);
        list.putObject("metadata").put("resourceVersion", Long.toString(store.revision()));
        ResponseWriters.send(ex, 200, list);
    }

    private void admitDelete(ResourceType type, String namespace, ObjectNode current, UserInfo user, boolean dryRun) {
        admission.admit(new Admission.Request(
                Admission.Operation.DELETE,
                type,
                null,
                namespace,
                current.path("metadata").path("name").asText(""),
                null,
                current,
                user,
                dryRun));
    }

    /**
     * Refuses paths a real API server would not route: a namespace on a cluster resource, unknown subresources (a
     * Pod's {@code resize} is one before 1.33).
     */
    private void checkPath(ResourceType type, ResourcePath rp, boolean create) {
        if (rp.namespace() != null && !type.namespaced()) {
            throw new ApiError(404, "NotFound", "the server could not find the requested resource");
        }
        boolean resize =
                PodResize.SUBRESOURCE.equals(rp.subresource()) && type.equals(Catalog.PODS) && version.podResize();
        if (rp.subresource() != null && !rp.subresource().equals("status") && !resize) {
            throw new ApiError(
                    404,
                    "NotFound",
                    "the server could not find the requested resource (" + rp.subresource() + " of " + type.plural()
                            + ")");
        }
        if (create && rp.name() != null) {
            throw new ApiError(
                    405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        }
    }

    void catalogChanged(ResourceType type) {
        if (type.equals(Catalog.CRDS)) {
            catalog.invalidate();
        }
    }

    /**
     * An error answered as a Kubernetes Status; {@code details} (name, group, kind) is set when the real server sets
     * it, e.g. on a 403.
     */
    static class ApiError extends RuntimeException {
        final int code;
        final String reason;
        final String detailsName;
        final String detailsGroup;
        final String detailsKind;

        ApiError(int code, String reason, String message) {
            this(code, reason, message, null, null, null);
        }

        ApiError(int code, String reason, String message, String name, String group, String kind) {
            super(message);
            this.code = code;
            this.reason = reason;
            this.detailsName = name;
            this.detailsGroup = group;
            this.detailsKind = kind;
        }
    }
}
