package dev.drover.bench;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the tasks' http checks probe in {@code bench --http-check}: one small HTTP server of the bench's on the node's
 * loopback address, answering {@code GET /healthz} with 200, counting the probes. The bench measures what probing
 * costs the agent, so every check points here rather than at a server per task.
 */
final class CheckTarget implements AutoCloseable {

    static final String PATH = "/healthz";
    private static final byte[] OK = "ok\n".getBytes(StandardCharsets.US_ASCII);

    private final HttpServer server;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final LongAdder probes = new LongAdder();

    CheckTarget() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
        server.setExecutor(threads);
        server.createContext(PATH, exchange -> {
            try (exchange) {
                probes.increment();
                exchange.sendResponseHeaders(200, OK.length);
                try (OutputStream body = exchange.getResponseBody()) {
                    body.write(OK);
                }
            }
        });
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    /** Probes answered so far. */
    long probes() {
        return probes.sum();
    }

    @Override
    public void close() {
        server.stop(0);
        threads.close();
    }
}
