package dev.drover.web;

import java.io.IOException;
import java.net.InetSocketAddress;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * An HTTP server without TLS (Jetty) that runs an {@link Exchange.Handler} for each request on a virtual thread: the
 * agent's metrics and health port, which Prometheus and the kubelet's probes reach in plain HTTP. It answers a few
 * short requests at a time, so it keeps one acceptor, one selector and a small pool of platform threads.
 */
public final class PlainHttp implements AutoCloseable {

    /** Platform threads at most: the acceptor, the selector and Jetty's own tasks; requests run on virtual ones. */
    static final int MAX_THREADS = 8;

    private final VirtualThreadServer server;
    private final ServerConnector connector;

    private PlainHttp(VirtualThreadServer server, ServerConnector connector) {
        this.server = server;
        this.connector = connector;
    }

    /** Serves {@code handler} on {@code address} (port 0: a free one; a wildcard address: every interface). */
    public static PlainHttp start(String name, InetSocketAddress address, Exchange.Handler handler) throws IOException {
        VirtualThreadServer jetty = new VirtualThreadServer(name, () -> new QueuedThreadPool(MAX_THREADS, 2));
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        ServerConnector connector = new ServerConnector(jetty.server(), 1, 1, new HttpConnectionFactory(http));
        connector.setHost(address.getHostString());
        connector.setPort(address.getPort());
        jetty.server().addConnector(connector);
        jetty.server().setHandler(new Exchanges(handler));
        jetty.start(address);
        return new PlainHttp(jetty, connector);
    }

    public int port() {
        return connector.getLocalPort();
    }

    /** The address served, with the port bound. */
    public InetSocketAddress address() {
        return new InetSocketAddress(connector.getHost(), port());
    }

    /** Stops serving: connections close, requests in flight end, their threads are joined. */
    @Override
    public void close() {
        server.stop(port());
    }
}
