package dev.drover.local;

import dev.drover.web.Exchange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The write requests the server has received (create, update, patch, delete, deletecollection on a resource), by
 * user, verb and resource, whatever their answer: each costs the API server, a refused or conflicting one too. Served
 * at {@code GET /metrics} (the administrator's, as a real server's metrics) as Prometheus text, one line a series:
 * {@code drover_local_write_requests_total{user="U",verb="patch",resource="allocations/status"} 3}. The bench reads it
 * to tell what an allocation costs the API server.
 */
final class WriteCounts {

    static final String PATH = "/metrics";
    static final String SERIES = "drover_local_write_requests_total";
    /** Distinct series kept; past it, writes count under user {@value #OTHER} (user names come from tokens). */
    static final int MAX_SERIES = 1000;

    static final String OTHER = "(other)";
    private static final Set<String> VERBS = Set.of("create", "update", "patch", "delete", "deletecollection");

    private record Key(String user, String verb, String resource) {}

    private final Map<Key, LongAdder> counts = new ConcurrentHashMap<>();

    /** Counts {@code request} when it is a write of a resource. */
    void count(UserInfo user, RequestInfo request) {
        if (!request.isResourceRequest() || !VERBS.contains(request.verb())) {
            return;
        }
        ResourcePath rp = request.resource();
        String resource = rp.subresource() == null ? rp.plural() : rp.plural() + "/" + rp.subresource();
        Key key = new Key(user.username(), request.verb(), resource);
        LongAdder n = counts.get(key);
        if (n == null) {
            if (counts.size() >= MAX_SERIES) {
                key = new Key(OTHER, request.verb(), resource);
            }
            n = counts.computeIfAbsent(key, k -> new LongAdder());
        }
        n.increment();
    }

    /** Every series, sorted, as Prometheus text. */
    String exposition() {
        Map<String, Long> sorted = new TreeMap<>();
        counts.forEach((k, n) -> sorted.put(
                SERIES + "{user=\"" + label(k.user()) + "\",verb=\"" + k.verb() + "\",resource=\"" + label(k.resource())
                        + "\"}",
                n.sum()));
        StringBuilder text = new StringBuilder("# TYPE " + SERIES + " counter\n");
        sorted.forEach((series, n) -> text.append(series).append(' ').append(n).append('\n'));
        return text.toString();
    }

    /** Answers {@code GET /metrics}. */
    void serve(Exchange ex) throws IOException {
        ex.send(200, "text/plain; version=0.0.4; charset=utf-8", exposition().getBytes(StandardCharsets.UTF_8));
    }

    /** A label value as the exposition format escapes it. */
    private static String label(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
