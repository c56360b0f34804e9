package dev.drover.metrics;

import dev.drover.web.Exchange;
import dev.drover.web.PlainHttp;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The agent's one HTTP port: {@code /metrics} (Prometheus text format, see {@link Exposition}),
 * {@code /healthz} (the process works) and {@code /readyz} (it watches the API
 * server and serves allocations). A failing check answers 503 with the reason.
 */
public final class MetricsServer implements AutoCloseable {

    private static final String TEXT = "text/plain; charset=utf-8";

    private final PlainHttp server;

    /**
     * @param address where to listen (a wildcard address: every interface)
     * @param healthy empty when live, else why not
     * @param ready   empty when ready, else why not
     */
    public MetricsServer(
            InetSocketAddress address,
            CollectorRegistry registry,
            Supplier<Optional<String>> healthy,
            Supplier<Optional<String>> ready)
            throws IOException {
        this.server = PlainHttp.start("metrics", address, ex -> route(ex, registry, healthy, ready));
    }

    /** Where it listens, the port a free one when 0 was asked. */
    public InetSocketAddress address() {
        return server.address();
    }

    public int port() {
        return server.port();
    }

    /** Each of the three paths, and any path that begins with one, is answered as that path; anything else is a 404. */
    private static void route(
            Exchange ex,
            CollectorRegistry registry,
            Supplier<Optional<String>> healthy,
            Supplier<Optional<String>> ready)
            throws IOException {
        String path = ex.rawPath();
        if (path.startsWith("/metrics")) {
            metrics(ex, registry);
        } else if (path.startsWith("/healthz")) {
            check(ex, healthy.get());
        } else if (path.startsWith("/readyz")) {
            check(ex, ready.get());
        } else {
            ex.send(404, TEXT, "this port serves /metrics, /healthz and /readyz\n".getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void metrics(Exchange ex, CollectorRegistry registry) throws IOException {
        String type = TextFormat.chooseContentType(ex.header("Accept"));
        ByteArrayOutputStream body = new ByteArrayOutputStream(16 * 1024);
        try (Writer w = new OutputStreamWriter(body, StandardCharsets.UTF_8)) {
            Exposition.write(type, w, registry);
        }
        ex.send(200, type, body.toByteArray());
    }

    private static void check(Exchange ex, Optional<String> problem) throws IOException {
        ex.send(problem.isEmpty() ? 200 : 503, TEXT, (problem.orElse("ok") + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /** Stops serving and waits for the requests being answered. */
    @Override
    public void close() {
        server.close();
    }
}
