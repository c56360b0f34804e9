package dev.drover.web;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A Jetty server whose requests, blocking as the handlers are, run on virtual threads of its own, which stopping it
 * joins. Its owner adds the connectors and the handler, then starts it.
 */
final class VirtualThreadServer {

    /** Jetty's setting for how many object references fill a cache line. */
    static final String REFERENCES_PER_CACHE_LINE = "org.eclipse.jetty.util.referencesPerCacheLine";

    private final Server server;
    private final ExecutorService virtualThreads;

    /** A server named {@code name}, whose acceptors and selectors are of the pool {@code threads} makes. */
    VirtualThreadServer(String name, Supplier<QueuedThreadPool> threads) {
        tellJettyReferenceSize();
        QueuedThreadPool pool = threads.get();
        pool.setName(name);
        virtualThreads = Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name(name + "-", 0).factory());
        pool.setVirtualThreadsExecutor(virtualThreads);
        server = new Server(pool);
    }

    /**
     * Jetty pads its thread pool's queue to a cache line, counted in object references, and where it is not told
     * how many fit it starts the JVM's platform MBean server to ask whether references are compressed: JMX and
     * every platform MBean (some 170 classes, and their memory) for one flag that nothing else in the agent asks
     * that way. The answer is read here without the MBean server and handed to Jetty before its first pool; a
     * value set on the command line is left as it is, and a JVM that cannot tell leaves Jetty to ask itself.
     */
    static void tellJettyReferenceSize() {
        if (System.getProperty(REFERENCES_PER_CACHE_LINE) != null) {
            return;
        }
        // where the JVM cannot tell, Jetty asks through JMX as it would have
        VmOptions.value("UseCompressedOops").ifPresent(compressed -> {
            int cacheLine = Integer.getInteger("org.eclipse.jetty.util.cacheLineBytes", 64);
            System.setProperty(
                    REFERENCES_PER_CACHE_LINE,
                    Integer.toString(Math.max(1, cacheLine / (Boolean.parseBoolean(compressed) ? 4 : 8))));
        });
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
