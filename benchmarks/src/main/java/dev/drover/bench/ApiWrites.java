package dev.drover.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.local.LocalApiServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The write requests the local API server counted ({@code GET /metrics}), by verb and resource, of every user but
 * the administrator: the bench makes all its own calls (the allocations' creates and deletes) as the administrator,
 * so what is left is what the agent wrote. Counts are taken before and after a phase; the difference is the phase's.
 */
final class ApiWrites {

    private static final Pattern SERIES = Pattern.compile(
            "(?m)^drover_local_write_requests_total\\{user=\"((?:[^\"\\\\]|\\\\.)*)\",verb=\"([a-z]+)\",resource=\"([^\"]*)\"\\} ([0-9]+)$");
    /** How long no write from the agent means it has written what a phase caused (its queued Events included). */
    static final long QUIET_MILLIS = 2_000;
    /** The longest the bench waits for that quiet. */
    static final long QUIET_LIMIT_MILLIS = 180_000;

    private final HttpClient http;
    private final URI server;

    /** {@code http} trusts the server; the bench closes it. */
    ApiWrites(HttpClient http, URI server) {
        this.http = http;
        this.server = server;
    }

    /** The agent's writes so far, by {@code "verb resource"} (e.g. {@code "patch allocations/status"}). */
    Map<String, Long> read() throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(server.resolve(LocalApiServer.WRITES_PATH))
                        .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("reading the API server's write counts: HTTP " + r.statusCode());
        }
        return parse(r.body());
    }

    /** The series of {@code metrics} of users other than the administrator, summed by verb and resource. */
    static Map<String, Long> parse(String metrics) {
        Map<String, Long> writes = new TreeMap<>();
        Matcher m = SERIES.matcher(metrics);
        while (m.find()) {
            if (!m.group(1).equals(LocalApiServer.ADMIN_USER)) {
                writes.merge(m.group(2) + " " + m.group(3), Long.parseLong(m.group(4)), Long::sum);
            }
        }
        return writes;
    }

    /**
     * Waits until the agent has written nothing for {@link #QUIET_MILLIS} (at most {@link #QUIET_LIMIT_MILLIS}), so
     * that writes a phase caused but the agent still held back (batched statuses, rate-limited Events) are counted.
     *
     * @return the counts then
     */
    Map<String, Long> readOnceQuiet() throws IOException, InterruptedException {
        long limit = System.nanoTime() + QUIET_LIMIT_MILLIS * 1_000_000;
        Map<String, Long> last = read();
        long quietSince = System.nanoTime();
        while (System.nanoTime() < limit) {
            Thread.sleep(250);
            Map<String, Long> now = read();
            if (!now.equals(last)) {
                last = now;
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince >= QUIET_MILLIS * 1_000_000) {
                break;
            }
        }
        return last;
    }

    /** {@code to} minus {@code from}, series by series, those that did not change left out. */
    static Map<String, Long> between(Map<String, Long> from, Map<String, Long> to) {
        Map<String, Long> d = new TreeMap<>();
        to.forEach((k, n) -> {
            long diff = n - from.getOrDefault(k, 0L);
            if (diff != 0) {
                d.put(k, diff);
            }
        });
        return d;
    }

    /** The two phases' writes together. */
    static Map<String, Long> plus(Map<String, Long> a, Map<String, Long> b) {
        Map<String, Long> sum = new TreeMap<>(a);
        b.forEach((k, n) -> sum.merge(k, n, Long::sum));
        return sum;
    }

    static long total(Map<String, Long> writes) {
        return writes.values().stream().mapToLong(Long::longValue).sum();
    }

    /** {@code apiWrites} (the breakdown) and {@code apiWritesPerAllocation} of {@code writes} over {@code allocs}. */
    static void put(ObjectNode result, Map<String, Long> writes, int allocs) {
        ObjectNode breakdown = result.putObject("apiWrites");
        writes.forEach(breakdown::put);
        result.put("apiWritesPerAllocation", Math.round(1000.0 * total(writes) / allocs) / 1000.0);
    }
}
