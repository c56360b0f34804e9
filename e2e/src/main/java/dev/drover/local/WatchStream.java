package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * An HTTP watch as kubectl and HTTP-watching clients expect it: a chunked
 * response with one JSON watch event per line, written as changes happen. The
 * events come from a watch on the CRUD store behind the front.
 */
final class WatchStream {

    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * Watch events go out as ASCII, non-ASCII characters as JSON escapes: with raw UTF-8, fabric8's HTTP
     * watch failed on an event holding a status message with a multiplication sign, and stopped the
     * agent's informer.
     */
    private static final ObjectMapper ASCII_JSON = com.fasterxml.jackson.databind.json.JsonMapper.builder()
            .enable(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII).build();
    private static final Object CLOSED = new Object();

    private WatchStream() {
    }

    /** Streams until the client goes away, the timeout passes or {@code stopping} is set; blocks the calling thread. */
    static void serve(HttpExchange exchange, KubernetesClient backend, ResourceType type, ResourcePath path,
                      Query query, java.time.Clock tables,
                      java.util.function.BooleanSupplier stopping, java.util.List<JsonNode> recentlyDeleted)
            throws IOException {
        BlockingQueue<Object> events = new LinkedBlockingQueue<>();
        ResourceDefinitionContext context = new ResourceDefinitionContext.Builder().withGroup(type.group())
                .withVersion(type.version()).withPlural(type.plural()).withKind(type.kind())
                .withNamespaced(type.namespaced()).build();
        var resources = backend.genericKubernetesResources(context);
        var scoped = path.namespace() == null ? resources.inAnyNamespace() : resources.inNamespace(path.namespace());
        FieldSelector selector = FieldSelector.parse(query.get("fieldSelector"));
        if (path.name() != null) {
            selector = FieldSelector.parse("metadata.name=" + path.name()
                    + (selector.isEmpty() ? "" : "," + query.get("fieldSelector")));
        }
        long since = parseVersion(query.get("resourceVersion"));
        var options = new ListOptionsBuilder();
        if (query.get("labelSelector") != null) {
            options.withLabelSelector(query.get("labelSelector"));
        }
        Watch watch = scoped.watch(options.build(), new Watcher<>() {
            @Override
            public void eventReceived(Action action, GenericKubernetesResource resource) {
                events.add(new Object[] {action.name(), resource});
            }

            @Override
            public void onClose(WatcherException cause) {
                events.add(CLOSED);
            }
        });
        // The store registers a watch only after its handshake, so a change made just before could be
        // missed: replay what the store holds beyond the client's version; duplicates are dropped below.
        java.util.Map<String, Long> sent = new java.util.HashMap<>();
        java.util.Set<String> goneSent = new java.util.HashSet<>();
        if (since >= 0) {
            java.util.Set<String> live = new java.util.HashSet<>();
            for (GenericKubernetesResource item : scoped.list(options.build()).getItems()) {
                events.add(new Object[] {"MODIFIED", item});
                live.add(item.getMetadata().getNamespace() + "/" + item.getMetadata().getName());
            }
            for (JsonNode gone : recentlyDeleted) {
                String ns = gone.path("metadata").path("namespace").asText("");
                boolean recreated = live.contains((ns.isEmpty() ? null : ns) + "/" + gone.path("metadata").path("name").asText());
                if (!recreated && (path.namespace() == null || path.namespace().equals(ns))) {
                    events.add(new Object[] {"DELETED", gone});
                }
            }
        }
        long timeoutSeconds = query.get("timeoutSeconds") == null ? 0 : Long.parseLong(query.get("timeoutSeconds"));
        long deadline = timeoutSeconds > 0 ? System.nanoTime() + Duration.ofSeconds(timeoutSeconds).toNanos() : Long.MAX_VALUE;
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.getResponseHeaders().set("Transfer-Encoding", "chunked");
        exchange.sendResponseHeaders(200, 0);
        try (watch; OutputStream out = exchange.getResponseBody()) {
            if (tables == null && "true".equals(query.get("allowWatchBookmarks"))) {
                // The JDK server sends the response headers with the first chunk; a client that waits for them
                // (fabric8's informer counts as watching only then) would wait for the first change. A real API
                // server answers at once; a BOOKMARK at the client's own version says nothing new and does that.
                ObjectNode bookmark = JSON.createObjectNode().put("type", "BOOKMARK");
                bookmark.putObject("object").put("apiVersion", type.group().isEmpty() ? type.version()
                                : type.group() + "/" + type.version()).put("kind", type.kind())
                        .putObject("metadata").put("resourceVersion", Long.toString(Math.max(since, 0)));
                out.write(ASCII_JSON.writeValueAsBytes(bookmark));
                out.write('\n');
            }
            out.flush();
            boolean sentColumns = false;
            while (!stopping.getAsBoolean() && System.nanoTime() < deadline) {
                Object next = events.poll(200, TimeUnit.MILLISECONDS);
                if (next == null) {
                    continue;
                }
                if (next == CLOSED) {
                    break;
                }
                Object[] e = (Object[]) next;
                JsonNode object = JSON.valueToTree(e[1]);
                long version = version(object);
                String key = object.path("metadata").path("namespace").asText("") + "/"
                        + object.path("metadata").path("name").asText("");
                boolean deleted = "DELETED".equals(e[0]);
                // The store's DELETED events carry the object's last version, not a newer one: a deletion
                // is news to the client whatever its version (duplicates are dropped by goneSent).
                if (!selector.matches(object) || (version <= since && !deleted)
                        || (!deleted && version <= sent.getOrDefault(key, -1L))
                        || (deleted && goneSent.contains(key + "@" + version))) {
                    continue;
                }
                if (deleted) {
                    goneSent.add(key + "@" + version);
                    sent.remove(key);
                } else {
                    sent.put(key, version);
                }
                ObjectNode event = JSON.createObjectNode().put("type", (String) e[0]);
                if (tables != null) {
                    // As the API server does: column definitions in the first event only.
                    ObjectNode table = Tables.table(type, object, tables.instant());
                    if (sentColumns) {
                        table.putArray("columnDefinitions");
                    }
                    sentColumns = true;
                    event.set("object", table);
                } else {
                    event.set("object", object);
                }
                out.write(ASCII_JSON.writeValueAsBytes(event));
                out.write('\n');
                out.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException clientGone) {
            // The watcher hung up; closing the store watch is all there is to do.
        }
    }

    private static long version(JsonNode object) {
        return parseVersion(object.path("metadata").path("resourceVersion").asText(null));
    }

    private static long parseVersion(String rv) {
        if (rv == null || rv.isEmpty()) {
            return -1;
        }
        try {
            return Long.parseLong(rv);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
