package dev.drover.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The agent's one HTTP port: {@code /metrics} (Prometheus text format, see {@link Exposition}),
 * {@code /healthz} (the process works) and {@code /readyz} (it watches the API
 * server and serves allocations). A failing check answers 503 with the reason.
 */
public final class MetricsServer implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService executor;

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
        this.server = HttpServer.create(address, 0);
        this.executor = Executors.newVirtualThreadPerTaskExecutor();
        server.setExecutor(executor);
        server.createContext("/metrics", ex -> metrics(ex, registry));
        server.createContext("/healthz", ex -> check(ex, healthy.get()));
        server.createContext("/readyz", ex -> check(ex, ready.get()));
        server.start();
    }

    /** Where it listens, the port a free one when 0 was asked. */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void metrics(HttpExchange ex, CollectorRegistry registry) throws IOException {
        try (ex) {
            String accept = ex.getRequestHeaders().getFirst("Accept");
            String type = TextFormat.chooseContentType(accept);
            ByteArrayOutputStream body = new ByteArrayOutputStream(16 * 1024);
            try (Writer w = new OutputStreamWriter(body, StandardCharsets.UTF_8)) {
                Exposition.write(type, w, registry);
            }
            ex.getResponseHeaders().set("Content-Type", type);
            send(ex, 200, body.toByteArray());
        }
    }

    private static void check(HttpExchange ex, Optional<String> problem) throws IOException {
        try (ex) {
            ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
            send(ex, problem.isEmpty() ? 200 : 503, (problem.orElse("ok") + "\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void send(HttpExchange ex, int code, byte[] body) throws IOException {
        if (ex.getRequestMethod().equals("HEAD")) {
            ex.sendResponseHeaders(code, -1);
            return;
        }
        ex.sendResponseHeaders(code, body.length);
        ex.getResponseBody().write(body);
    }

    /** Stops serving and waits for the requests being answered. */
    @Override
    public void close() {
        server.stop(0);
        executor.close();
    }
}
