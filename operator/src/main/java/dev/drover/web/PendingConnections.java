package dev.drover.web;

import java.nio.ByteBuffer;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Bounds a connector's connections while they wait for a request's head ({@link ConnectionBounds}), against
 * slowloris: a head must be complete by a deadline from the accept (or from the end of the previous request), which
 * trickled bytes do not put off as they do an idle timeout; and connections that have not yet shown a client's
 * credentials ({@link #trust}), or a client certificate the server knows at the handshake ({@link KnownCertificates}),
 * wait in a pool of their own whose oldest is closed for a new one, so they cannot use up
 * the connections known clients need. A connection being served is neither (over HTTP/2: while any of its requests
 * is): a followed log may be quiet for hours. An upgraded one (an exec session) has been let in by its negotiator and
 * has its own idle limit.
 *
 * <p>Listens to the TLS connections of its connector (one per socket; the HTTP connection above it is replaced by an
 * upgrade) and sees each request's head as a customizer, before any handler runs.
 */
final class PendingConnections implements Connection.Listener, HttpConfiguration.Customizer {

    private final ConnectionBounds bounds;
    private final KnownCertificates known;
    private final Scheduler scheduler;
    private final Map<EndPoint, Held> held = new ConcurrentHashMap<>();
    /** Connections waiting for a head, not trusted, oldest first. Guarded by {@code this}. */
    private final LinkedHashSet<Held> untrusted = new LinkedHashSet<>();

    PendingConnections(ConnectionBounds bounds, KnownCertificates known, Scheduler scheduler) {
        this.bounds = bounds;
        this.known = known;
        this.scheduler = scheduler;
    }

    /** One socket's state; its fields guarded by the {@link PendingConnections}. */
    private static final class Held {
        final EndPoint network;
        boolean trusted;
        /** While waiting for a head: what closes the connection at its deadline. */
        Scheduler.Task deadline;
        /** Which wait a deadline belongs to, so one that fires as its head arrives closes nothing. */
        long wait;
        /** Requests being served: one at most over HTTP/1.1, as many as the client multiplexes over HTTP/2. */
        int serving;

        Held(EndPoint network) {
            this.network = network;
        }
    }

    @Override
    public void onOpened(Connection connection) {
        if (connection instanceof SslConnection tls) {
            Held h = new Held(connection.getEndPoint());
            held.put(h.network, h);
            tls.addHandshakeListener(new SslHandshakeListener() {
                @Override
                public void handshakeSucceeded(Event event) {
                    X509Certificate[] chain = clientCertificates(event.getSSLEngine());
                    if (chain.length > 0 && known.known(chain)) {
                        trust(h);
                    }
                }
            });
            await(h, bounds.headDeadline());
        }
    }

    @Override
    public void onClosed(Connection connection) {
        if (connection instanceof SslConnection) {
            // out of the map first: an await that comes after then leaves it alone
            Held h = held.remove(connection.getEndPoint());
            if (h != null) {
                synchronized (this) {
                    stopWaiting(h);
                }
            }
        }
    }

    /** A request's head arrived: its connection waits no more until the request ends. */
    @Override
    public Request customize(Request request, HttpFields.Mutable responseHeaders) {
        Held h = held(request);
        if (h == null) {
            return request;
        }
        synchronized (this) {
            h.serving++;
            stopWaiting(h);
        }
        request.addHttpStreamWrapper(stream -> new HttpStream.Wrapper(stream) {
            private volatile boolean upgraded;
            private final AtomicBoolean finished = new AtomicBoolean();

            @Override
            public void send(
                    MetaData.Request request,
                    MetaData.Response response,
                    boolean last,
                    ByteBuffer content,
                    Callback callback) {
                if (response != null && response.getStatus() == HttpStatus.SWITCHING_PROTOCOLS_101) {
                    upgraded = true;
                }
                super.send(request, response, last, content, callback);
            }

            // before the stream goes on to the next request, whose head may be read at once
            @Override
            public void succeeded() {
                if (finished.compareAndSet(false, true)) {
                    ended(h, upgraded);
                }
                super.succeeded();
            }

            @Override
            public void failed(Throwable x) {
                if (finished.compareAndSet(false, true)) {
                    ended(h, upgraded);
                }
                super.failed(x);
            }
        });
        return request;
    }

    /** The connection of {@code request} showed a client's credentials: it leaves the untrusted pool for good. */
    void trust(Request request) {
        Held h = held(request);
        if (h != null) {
            trust(h);
        }
    }

    private synchronized void trust(Held h) {
        h.trusted = true;
        untrusted.remove(h);
    }

    /** The certificates the client presented in {@code engine}'s handshake, its own first; none: empty. */
    private static X509Certificate[] clientCertificates(SSLEngine engine) {
        Certificate[] presented;
        try {
            presented = engine.getSession().getPeerCertificates();
        } catch (SSLPeerUnverifiedException none) {
            return new X509Certificate[0];
        }
        X509Certificate[] chain = new X509Certificate[presented.length];
        for (int i = 0; i < presented.length; i++) {
            if (!(presented[i] instanceof X509Certificate c)) {
                return new X509Certificate[0];
            }
            chain[i] = c;
        }
        return chain;
    }

    /** Connections waiting for a head, not trusted. */
    synchronized int untrustedCount() {
        return untrusted.size();
    }

    /** Connections held now, in any state. */
    int count() {
        return held.size();
    }

    private Held held(Request request) {
        EndPoint endPoint = request.getConnectionMetaData().getConnection().getEndPoint();
        while (endPoint instanceof EndPoint.Wrapper wrapper) {
            endPoint = wrapper.unwrap();
        }
        return held.get(endPoint);
    }

    private void ended(Held h, boolean upgraded) {
        synchronized (this) {
            h.serving--;
            if (upgraded) {
                h.trusted = true;
                return;
            }
        }
        await(h, bounds.keepAlive());
    }

    /**
     * Starts the wait for a head, unless a request is still being served (HTTP/2): its deadline, and for an untrusted
     * connection a place in the pool.
     */
    private void await(Held h, Duration deadline) {
        Held evicted = null;
        synchronized (this) {
            if (h.serving > 0 || held.get(h.network) != h) {
                return; // serving another request, or closed meanwhile
            }
            stopWaiting(h);
            long wait = ++h.wait;
            h.deadline = scheduler.schedule(() -> expire(h, wait), deadline);
            if (!h.trusted) {
                untrusted.add(h);
                if (untrusted.size() > bounds.maxUntrusted()) {
                    evicted = untrusted.removeFirst();
                    stopWaiting(evicted);
                }
            }
        }
        if (evicted != null) {
            evicted.network.close();
        }
    }

    private void expire(Held h, long wait) {
        synchronized (this) {
            if (h.deadline == null || h.wait != wait) {
                return;
            }
            stopWaiting(h);
        }
        h.network.close();
    }

    /** Ends a wait: no deadline, out of the pool. Under the lock. */
    private void stopWaiting(Held h) {
        if (h.deadline != null) {
            h.deadline.cancel();
            h.deadline = null;
        }
        untrusted.remove(h);
    }
}
