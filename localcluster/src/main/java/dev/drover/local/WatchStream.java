package dev.drover.local;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.web.Exchange;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * An HTTP watch as kubectl and HTTP-watching clients expect it: a chunked
 * response with one JSON watch event per line, written as changes happen, from
 * a watch registered on the {@link ObjectStore} at the client's version.
 */
final class WatchStream {

    private static final ObjectMapper JSON = NestingDepth.mapper();
    /**
     * Watch events go out as ASCII, non-ASCII characters as JSON escapes: with raw UTF-8, fabric8's HTTP
     * watch failed on an event holding a status message with a multiplication sign, and stopped the
     * agent's informer.
     */
    private static final ObjectMapper ASCII_JSON = com.fasterxml.jackson.databind.json.JsonMapper.builder(
                    NestingDepth.factory())
            .enable(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII)
            .build();

    private WatchStream() {}

    /** Streams until the client goes away, the timeout passes or {@code stopping} is set; blocks the calling thread. */
    static void serve(
            Exchange exchange,
            ObjectStore store,
            ResourceType type,
            ResourcePath path,
            Query query,
            java.time.Clock tables,
            boolean watchList,
            BooleanSupplier stopping)
            throws IOException {
        boolean initialEvents = initialEvents(query, watchList);
        // the same selectors, with the same answer to a bad one, as a list
        FieldSelector fields = QuerySelectors.fieldSelector(type, query);
        if (path.name() != null) {
            fields = FieldSelector.parse(
                    "metadata.name=" + path.name() + (fields.isEmpty() ? "" : "," + query.get("fieldSelector")));
        }
        LabelSelector labels = QuerySelectors.labelSelector(query);
        // "0" means any version: the client gets the current objects first, as without a version.
        long since = parseVersion(query.get("resourceVersion"));
        // with sendInitialEvents (NotOlderThan the version asked), the current state, at least as new as any version
        since = since == 0 || initialEvents ? -1 : since;
        long timeoutSeconds = query.get("timeoutSeconds") == null ? 0 : Long.parseLong(query.get("timeoutSeconds"));
        long deadline = timeoutSeconds > 0
                ? System.nanoTime() + Duration.ofSeconds(timeoutSeconds).toNanos()
                : Long.MAX_VALUE;
        ObjectStore.Watch watch;
        try {
            watch = store.watch(type, path.namespace(), since, initialEvents);
        } catch (ApiFront.ApiError expired) {
            // As the API server: the stream opens and its one event says the version is gone; the client lists again.
            try (OutputStream out = exchange.stream(200, "application/json")) {
                ObjectNode event = JSON.createObjectNode().put("type", "ERROR");
                event.putObject("object")
                        .put("kind", "Status")
                        .put("apiVersion", "v1")
                        .put("status", "Failure")
                        .put("message", expired.getMessage())
                        .put("reason", expired.reason)
                        .put("code", expired.code);
                out.write(ASCII_JSON.writeValueAsBytes(event));
                out.write('\n');
            }
            return;
        }
        try (watch;
                OutputStream out = exchange.stream(200, "application/json")) {
            if (tables == null && !initialEvents && "true".equals(query.get("allowWatchBookmarks"))) {
                // The JDK server sends the response headers with the first chunk; a client that waits for them
                // (fabric8's informer counts as watching only then) would wait for the first change. A real API
                // server answers at once; a BOOKMARK at the client's own version says nothing new and does that.
                ObjectNode bookmark = JSON.createObjectNode().put("type", "BOOKMARK");
                bookmark.putObject("object")
                        .put("apiVersion", type.groupVersion())
                        .put("kind", type.kind())
                        .putObject("metadata")
                        .put("resourceVersion", Long.toString(Math.max(since, 0)));
                out.write(ASCII_JSON.writeValueAsBytes(bookmark));
                out.write('\n');
            }
            out.flush();
            boolean sentColumns = false;
            boolean unflushed = false;
            while (!stopping.getAsBoolean() && System.nanoTime() < deadline && !watch.overflowed()) {
                // events go out in one flush per burst; a burst ends when nothing more waits, whether the last
                // change was sent or dropped by the selectors
                if (unflushed && watch.pending() == 0) {
                    out.flush();
                    unflushed = false;
                }
                ObjectStore.Change change = watch.poll(200);
                if (change == null) {
                    continue;
                }
                if (change.type().equals(ObjectStore.INITIAL_EVENTS_END)) {
                    // as the API server: a BOOKMARK at the version the initial state was read at, so marked
                    ObjectNode bookmark = JSON.createObjectNode().put("type", "BOOKMARK");
                    ObjectNode meta = bookmark.putObject("object")
                            .put("apiVersion", type.groupVersion())
                            .put("kind", type.kind())
                            .putObject("metadata")
                            .put("resourceVersion", Long.toString(change.revision()));
                    meta.putObject("annotations").put("k8s.io/initial-events-end", "true");
                    out.write(ASCII_JSON.writeValueAsBytes(bookmark));
                    out.write('\n');
                    unflushed = true;
                    continue;
                }
                ObjectNode object = change.object();
                boolean selected = fields.matches(object) && labels.matches(object);
                String action = change.type();
                if (change.previous() != null) {
                    // as the API server's watch cache: entering the selection is an ADDED, leaving it a DELETED
                    // (of the object as it is now), so a watcher learns that an object is no longer its
                    boolean before = fields.matches(change.previous()) && labels.matches(change.previous());
                    action = selected && !before ? "ADDED" : !selected && before ? "DELETED" : action;
                    selected |= before;
                }
                if (!selected) {
                    continue;
                }
                ObjectNode event = JSON.createObjectNode().put("type", action);
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
                unflushed = true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException clientGone) {
            // The watcher hung up; closing the store watch is all there is to do.
        }
    }

    /**
     * Whether the watch asks for its initial state as events ({@code sendInitialEvents=true}), as a watch list does;
     * refused as the real server refuses it where WatchList is off (before 1.32), or without the options it needs.
     */
    private static boolean initialEvents(Query query, boolean watchList) {
        if (!"true".equals(query.get("sendInitialEvents"))) {
            return false;
        }
        String problem = !watchList
                ? "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList"
                        + " feature gate is enabled"
                : !"NotOlderThan".equals(query.get("resourceVersionMatch"))
                        ? "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch"
                                + " to NotOlderThan"
                        : !"true".equals(query.get("allowWatchBookmarks"))
                                ? "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting"
                                        + " allowWatchBookmarks to true"
                                : null;
        if (problem != null) {
            throw new ApiFront.ApiError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: " + problem);
        }
        return true;
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
