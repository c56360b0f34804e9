package dev.drover.web;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A Jetty server whose requests, blocking as the handlers are, run on virtual threads of its own, which stopping it
 * joins. Its owner adds the connectors and the handler, then starts it.
 */
final class VirtualThreadServer {

    private final Server server;
    private final ExecutorService virtualThreads;

    /** A server named {@code name}, whose acceptors and selectors are of {@code threads}. */
    VirtualThreadServer(String name, QueuedThreadPool threads) {
        threads.setName(name);
        virtualThreads = Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name(name + "-", 0).factory());
        threads.setVirtualThreadsExecutor(virtualThreads);
        server = new Server(threads);
    }

    Server server() {
        return server;
    }

    /** Starts serving on {@code address}, as its connectors say; a server that cannot is stopped again. */
    void start(InetSocketAddress address) throws IOException {
        try {
            server.start();
        } catch (Exception e) {
            try {
                server.stop();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            virtualThreads.close();
            throw e instanceof IOException io ? io : new IOException("cannot serve on " + address + ": " + e, e);
        }
    }

    /** Stops serving on {@code port}: connections close, requests in flight end, their threads are joined. */
    void stop(int port) {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop the server on port " + port + ": " + e, e);
        } finally {
            virtualThreads.shutdownNow();
            virtualThreads.close();
        }
    }
}
