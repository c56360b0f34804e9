package dev.drover.web;

import dev.drover.execstream.Channels;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.alpn.server.ALPNServerConnectionFactory;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.http.pathmap.RegexPathSpec;
import org.eclipse.jetty.http2.server.HTTP2ServerConnectionFactory;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.WindowRateControl;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.websocket.core.Configuration;
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeRequest;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeResponse;
import org.eclipse.jetty.websocket.core.server.WebSocketNegotiator;
import org.eclipse.jetty.websocket.core.server.WebSocketUpgradeHandler;

/**
 * An HTTPS server (Jetty) that runs an {@link Exchange.Handler} for each request and also takes WebSocket upgrades on
 * chosen paths. It speaks HTTP/2 to a client that offers it (ALPN), as kube-apiserver does, so that a client's requests
 * share one connection ({@link #MAX_STREAMS}, {@link #MAX_WASTED_FRAMES}), and HTTP/1.1 to the others and to upgrades.
 * TLS comes from the caller's {@link SSLContext} (so a context that rotates its certificate keeps doing so); a client
 * certificate is asked for, never required, when {@code wantClientAuth}. Upgrades speak the exec channel protocol,
 * whose bounds they get ({@link Channels#MAX_MESSAGE}, {@link #UPGRADED_IDLE}). Requests, blocking as the handlers
 * are, run on virtual threads. Connections are bounded against floods and slowloris ({@link ConnectionBounds}); health probes
 * may get a port of their own ({@link Probes}), which the clients' connections never use up.
 */
public final class JettyHttps implements AutoCloseable {

    /** The most a request's line and headers may have together (kube-apiserver's limit). */
    public static final int MAX_REQUEST_HEAD = 1024 * 1024;

    /**
     * How long a connection may send nothing (a client that stalls in a request's body) before it is closed; the
     * time to a request's head is bounded apart ({@link ConnectionBounds}), and a request being served is never idle.
     */
    static final Duration IDLE = Duration.ofSeconds(30);
    /**
     * How long an upgraded connection (an exec session) may move no byte before it is closed, which ends its
     * command: an interactive shell may sit idle a while (kubelet's own streaming limit is 4 hours).
     */
    public static final Duration UPGRADED_IDLE = Duration.ofHours(1);
    /** Requests one HTTP/2 connection may have in flight; the client is told, and one more is refused. */
    static final int MAX_STREAMS = 128;
    /**
     * Frames a second an HTTP/2 client may send that make the server work for nothing (a stream reset at once, the
     * rapid-reset attack; empty frames, pings, settings) before its connection is told to go away.
     */
    static final int MAX_WASTED_FRAMES = 128;
    /** Frames an upgraded connection may have waiting to be written; a send beyond them fails. */
    static final int MAX_OUTGOING_FRAMES = 64;

    /**
     * WebSocket upgrades of the raw paths {@code paths} accepts, negotiated by {@code negotiator}; any other request
     * (an upgrade of another path too) goes to the handler.
     */
    public record Upgrade(Predicate<String> paths, WebSocketNegotiator negotiator) {

        /** Upgrades of the raw paths {@code regex} matches. */
        public Upgrade(String regex, WebSocketNegotiator negotiator) {
            this(Pattern.compile(regex).asMatchPredicate(), negotiator);
        }
    }

    private final VirtualThreadServer server;
    private final ServerConnector connector;
    private final ServerConnector probing;

    private JettyHttps(VirtualThreadServer server, ServerConnector connector, ServerConnector probing) {
        this.server = server;
        this.connector = connector;
        this.probing = probing;
    }

    /**
     * Where a server also answers its health probes, apart from the connections its clients use up: {@code paths} only
     * (anything else is a 404), over TLS as the main port, within bounds of its own.
     */
    public record Probes(InetSocketAddress address, Set<String> paths) {

        /** A probe is one short request on a fresh connection; a handful at once is plenty. */
        static final ConnectionBounds BOUNDS =
                new ConnectionBounds(16, 8, ConnectionBounds.DEFAULT.headDeadline(), Duration.ofSeconds(5));

        public Probes {
            paths = Set.copyOf(paths);
        }
    }

    /**
     * Serves {@code handler} on {@code address} (port 0: a free one), with at most {@code backlog} waiting to connect,
     * within {@link ConnectionBounds#DEFAULT}.
     */
    public static JettyHttps start(
            String name,
            InetSocketAddress address,
            int backlog,
            SSLContext tls,
            boolean wantClientAuth,
            Exchange.Handler handler,
            List<Upgrade> upgrades)
            throws IOException {
        return start(
                name,
                address,
                backlog,
                ConnectionBounds.DEFAULT,
                null,
                tls,
                wantClientAuth,
                KnownCertificates.NONE,
                handler,
                upgrades);
    }

    /**
     * As {@link #start(String, InetSocketAddress, int, SSLContext, boolean, Exchange.Handler, List)}, within {@code
     * bounds}; with {@code probes} (null: none), the handler also gets its probe paths on their own port. A handler
     * marks a connection whose request showed a client's credentials with {@link #trust}; a connection presenting a
     * client certificate {@code known} knows is trusted from its handshake.
     */
    public static JettyHttps start(
            String name,
            InetSocketAddress address,
            int backlog,
            ConnectionBounds bounds,
            Probes probes,
            SSLContext tls,
            boolean wantClientAuth,
            KnownCertificates known,
            Exchange.Handler handler,
            List<Upgrade> upgrades)
            throws IOException {
        VirtualThreadServer jetty = new VirtualThreadServer(name, QueuedThreadPool::new);
        Server server = jetty.server();

        SslContextFactory.Server ssl = new SslContextFactory.Server();
        ssl.setSslContext(tls);
        ssl.setWantClientAuth(wantClientAuth);
        // the client's order of cipher suites decides, as with Go's crypto/tls (kube-apiserver): a client without
        // AES instructions in its compiler (the agent on C1, CipherPreference) lists ChaCha20-Poly1305 first
        ssl.setUseCipherSuitesOrder(false);
        ServerConnector connector = connector(server, ssl, address, backlog, bounds, known);
        ServerConnector probing = probes == null
                ? null
                : connector(server, ssl, probes.address(), 8, Probes.BOUNDS, KnownCertificates.NONE);

        Handler exchanges = new Exchanges(handler);
        Handler served = upgrades.isEmpty() ? exchanges : new Upgrades(upgrades, exchanges);
        server.setHandler(probes == null ? served : new ProbesOnly(probing, probes.paths(), served));
        jetty.start(address);
        return new JettyHttps(jetty, connector, probing);
    }

    /** A TLS connector of {@code server} on {@code address}, within {@code bounds}. */
    private static ServerConnector connector(
            Server server,
            SslContextFactory.Server ssl,
            InetSocketAddress address,
            int backlog,
            ConnectionBounds bounds,
            KnownCertificates known) {
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        // the handlers read the raw target and judge every escape themselves (as under the JDK server, which passed
        // it on as sent), so their messages, not Jetty's, tell a client what is wrong with it
        http.setUriCompliance(UriCompliance.UNSAFE);
        // as much as kube-apiserver takes (Go's default MaxHeaderBytes, 1 MiB): the gateway is handed what it
        // forwards (a user in hundreds of groups is a header per group), and the local API server answers an
        // oversized token as it does, with 401; an exec's command travels in the query. A limit, not a buffer
        http.setRequestHeaderSize(MAX_REQUEST_HEAD);
        HttpConnectionFactory http1 = new HttpConnectionFactory(http);
        HTTP2ServerConnectionFactory http2 = new HTTP2ServerConnectionFactory(http);
        http2.setMaxConcurrentStreams(MAX_STREAMS);
        http2.setRateControlFactory(new WindowRateControl.Factory(MAX_WASTED_FRAMES));
        // exec sessions are WebSocket upgrades of HTTP/1.1, which every client of them (kubectl, the JDK's) dials
        http2.setConnectProtocolEnabled(false);
        ALPNServerConnectionFactory alpn = new ALPNServerConnectionFactory(http2.getProtocol(), http1.getProtocol());
        alpn.setDefaultProtocol(http1.getProtocol());
        ServerConnector connector =
                new ServerConnector(server, new SslConnectionFactory(ssl, alpn.getProtocol()), alpn, http2, http1);
        PendingConnections pending = new PendingConnections(bounds, known, connector.getScheduler());
        // first: a head has arrived whatever the customizers after it make of the request
        http.addCustomizer(pending);
        // clients dial addresses and names the certificate may not hold as a host name; the JDK server never checked
        http.addCustomizer(new SecureRequestCustomizer(false, false, -1, false));
        connector.addEventListener(pending);
        connector.setHost(address.getHostString());
        connector.setPort(address.getPort());
        connector.setAcceptQueueSize(backlog);
        connector.setIdleTimeout(IDLE.toMillis());
        server.addConnector(connector);
        server.addBean(new NetworkConnectionLimit(bounds.maxConnections(), connector));
        return connector;
    }

    /**
     * Marks the connection of {@code ex} as a known client's, whose request showed its credentials: it no longer
     * counts among the untrusted connections, which make way for new ones ({@link ConnectionBounds#maxUntrusted}).
     */
    public static void trust(Exchange ex) {
        trust(ex.request());
    }

    /** {@link #trust(Exchange)} of a request Jetty serves itself (a WebSocket upgrade). */
    public static void trust(Request request) {
        PendingConnections pending =
                request.getConnectionMetaData().getConnector().getBean(PendingConnections.class);
        if (pending != null) {
            pending.trust(request);
        }
    }

    public int port() {
        return connector.getLocalPort();
    }

    /** The port of the probes; -1 without them. */
    public int probePort() {
        return probing == null ? -1 : probing.getLocalPort();
    }

    /** Connections the main port holds now, in any state (tests). */
    public int connections() {
        return connector.getBean(PendingConnections.class).count();
    }

    /** Connections the main port holds that wait for a head without being trusted (tests). */
    public int untrustedConnections() {
        return connector.getBean(PendingConnections.class).untrustedCount();
    }

    /** The address served, with the port bound. */
    public InetSocketAddress address() {
        return new InetSocketAddress(connector.getHost(), port());
    }

    /** The certificates a client presented in the handshake; null when it presented none. */
    public static X509Certificate[] peerCertificates(Exchange ex) {
        return peerCertificates(ex.request());
    }

    /** {@link #peerCertificates(Exchange)} of a request Jetty serves itself (a WebSocket upgrade). */
    public static X509Certificate[] peerCertificates(Request request) {
        return request.getAttribute(EndPoint.SslSessionData.ATTRIBUTE) instanceof EndPoint.SslSessionData ssl
                        && ssl.peerCertificates() != null
                        && ssl.peerCertificates().length > 0
                ? ssl.peerCertificates()
                : null;
    }

    /** Stops serving: connections close, requests in flight end, their threads are joined. */
    @Override
    public void close() {
        server.stop(port());
    }

    /** Sends a WebSocket upgrade of a path an {@link Upgrade} takes to its negotiator, everything else on. */
    private static final class Upgrades extends Handler.Wrapper {

        private final List<Upgrade> upgrades;
        private final WebSocketUpgradeHandler websockets = new WebSocketUpgradeHandler();

        Upgrades(List<Upgrade> upgrades, Handler exchanges) {
            super(exchanges);
            this.upgrades = List.copyOf(upgrades);
            websockets.addMapping(new RegexPathSpec("^/.*$"), new WebSocketNegotiator() {
                @Override
                public FrameHandler negotiate(
                        ServerUpgradeRequest request, ServerUpgradeResponse response, Callback callback) {
                    for (Upgrade u : Upgrades.this.upgrades) {
                        if (u.paths().test(request.getHttpURI().getPath())) {
                            return u.negotiator().negotiate(request, response, callback);
                        }
                    }
                    throw new IllegalStateException(
                            "no upgrade takes " + request.getHttpURI().getPath());
                }

                /** Every upgrade served is of the channel protocol: its bounds, and a session's idle limit. */
                @Override
                public void customize(Configuration configuration) {
                    configuration.setMaxBinaryMessageSize(Channels.MAX_MESSAGE);
                    configuration.setMaxFrameSize(Channels.MAX_MESSAGE);
                    configuration.setMaxTextMessageSize(1024);
                    configuration.setIdleTimeout(UPGRADED_IDLE);
                    // a session writes one message, one pong and a close at a time: more queued is a peer not reading
                    configuration.setMaxOutgoingFrames(MAX_OUTGOING_FRAMES);
                }
            });
            addBean(websockets);
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            String path = request.getHttpURI().getPath();
            if ("websocket".equalsIgnoreCase(request.getHeaders().get("Upgrade"))
                    && upgrades.stream().anyMatch(u -> u.paths().test(path))) {
                return websockets.handle(request, response, callback);
            }
            return super.handle(request, response, callback);
        }

        @Override
        public void setServer(Server server) {
            super.setServer(server);
            websockets.setServer(server);
        }
    }

    /** On the probes' port, serves their paths and nothing else. */
    private static final class ProbesOnly extends Handler.Wrapper {

        private final ServerConnector probing;
        private final Set<String> paths;

        ProbesOnly(ServerConnector probing, Set<String> paths, Handler served) {
            super(served);
            this.probing = probing;
            this.paths = paths;
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            if (request.getConnectionMetaData().getConnector() == probing
                    && !paths.contains(request.getHttpURI().getPath())) {
                Response.writeError(
                        request,
                        response,
                        callback,
                        404,
                        "this port serves "
                                + String.join(", ", paths.stream().sorted().toList()));
                return true;
            }
            return super.handle(request, response, callback);
        }
    }
}
