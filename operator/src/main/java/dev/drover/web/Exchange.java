package dev.drover.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;

/**
 * One request and its one reply, as the servers' handlers see them: what was asked (method, target as sent, headers,
 * body) over which connection, and a reply either whole, of a known length ({@link #send}), or streamed as it is
 * written ({@link #stream}). A reply that has no body (to a HEAD, a 204, a 304) goes out without one, whatever the
 * handler gives. Jetty serves it ({@link JettyHttps}, {@link PlainHttp}); over TLS, the client's certificates are
 * {@link JettyHttps#peerCertificates(Exchange)}.
 */
public final class Exchange {

    /** Answers an exchange, blocking as long as it must (a followed log), on a virtual thread of its own. */
    @FunctionalInterface
    public interface Handler {
        void handle(Exchange ex) throws IOException;
    }

    /**
     * What of a request's body its handler left unread is read and dropped when the exchange ends, up to this many
     * bytes: over HTTP/2 a stream whose body is left unread is reset (CANCEL), which a client still sending it (the
     * JDK's, fabric8's DeleteOptions) takes for a failed request, whatever the answer was; over HTTP/1.1 the
     * connection is kept instead of closed.
     */
    static final int DRAIN = 1024 * 1024;

    private final Request request;
    private final Response response;
    private final URI target;
    private InputStream body;
    private OutputStream out;
    private int status = -1;
    private boolean closed;
    private IOException broken;

    /** @throws IllegalArgumentException when the request's target is no URI (a malformed escape) */
    Exchange(Request request, Response response) {
        this.request = request;
        this.response = response;
        this.target = URI.create(request.getHttpURI().getPathQuery());
    }

    /** The Jetty request served. */
    Request request() {
        return request;
    }

    public String method() {
        return request.getMethod();
    }

    /** The path as sent, its escapes undecoded: the handler judges them. */
    public String rawPath() {
        return target.getRawPath();
    }

    /** The query as sent, its escapes undecoded; null without one. */
    public String rawQuery() {
        return target.getRawQuery();
    }

    /** The path and query as sent, for a log. */
    public String target() {
        return target.toString();
    }

    /** The value of the first request header {@code name} (in any case); null without one. */
    public String header(String name) {
        return request.getHeaders().get(name);
    }

    /** The values of every request header {@code name} (in any case), one a header line; empty without one. */
    public List<String> headers(String name) {
        return request.getHeaders().getValuesList(name);
    }

    /** Every request header by its name as sent, the values one a header line. */
    public Map<String, List<String>> headers() {
        Map<String, List<String>> all = new LinkedHashMap<>();
        for (HttpField field : request.getHeaders()) {
            all.computeIfAbsent(field.getName(), n -> new ArrayList<>()).add(field.getValue());
        }
        return all;
    }

    /** The client's end of the connection. */
    public InetSocketAddress remoteAddress() {
        return inet(request.getConnectionMetaData().getRemoteSocketAddress());
    }

    /** The server's end of the connection. */
    public InetSocketAddress localAddress() {
        return inet(request.getConnectionMetaData().getLocalSocketAddress());
    }

    private static InetSocketAddress inet(SocketAddress address) {
        return address instanceof InetSocketAddress i ? i : null;
    }

    /** The request's body, read as it comes. */
    public synchronized InputStream body() {
        if (body == null) {
            body = Content.Source.asInputStream(request);
        }
        return body;
    }

    /** Whether a reply has begun: a handler that fails after that cannot answer with an error any more. */
    public synchronized boolean started() {
        return status >= 0;
    }

    /** Replies {@code status} with the whole of {@code body}, as {@code contentType}. */
    public void send(int status, String contentType, byte[] body) throws IOException {
        send(status, contentType, body, Duration.ZERO);
    }

    /** As {@link #send(int, String, byte[])}; {@code retryAfter}, unless zero, goes out as {@code Retry-After}. */
    public void send(int status, String contentType, byte[] body, Duration retryAfter) throws IOException {
        OutputStream whole = begin(status, contentType, body.length == 0 ? -1 : body.length, retryAfter);
        if (body.length > 0) {
            whole.write(body);
        }
    }

    /**
     * Begins a reply of {@code status} whose body, as {@code contentType} (null: none said), is what the handler writes
     * to the stream answered, chunked, as it comes. The status goes out now, before any of the body, so that a client
     * knows at once that a quiet stream (a followed log) has begun. A reply without a body has its stream closed.
     */
    public OutputStream stream(int status, String contentType) throws IOException {
        return begin(status, contentType, 0, Duration.ZERO);
    }

    /**
     * Sends the status and headers: {@code length} 0 streams the body, -1 sends none, more is its exact length.
     * {@code retryAfter}, unless zero, in whole seconds, at least one.
     */
    private synchronized OutputStream begin(int code, String contentType, long length, Duration retryAfter)
            throws IOException {
        if (status >= 0) {
            throw new IOException("a reply has begun already: " + status);
        }
        status = code;
        response.setStatus(code);
        HttpFields.Mutable headers = response.getHeaders();
        if (contentType != null) {
            headers.put("Content-Type", contentType);
        }
        if (!retryAfter.isZero()) {
            headers.put("Retry-After", Long.toString(Math.max(1, retryAfter.toSeconds())));
        }
        OutputStream reply = replyBody();
        if (length > 0) {
            headers.put("Content-Length", Long.toString(length));
        } else if (length < 0 || code == 204 || code == 304 || "HEAD".equals(request.getMethod())) {
            if (code != 204 && code != 304) {
                headers.put("Content-Length", "0");
            }
            reply.close();
        } else {
            // a streamed body: the status goes out now, not with the first bytes
            reply.flush();
        }
        return reply;
    }

    private OutputStream replyBody() {
        if (out == null) {
            out = Content.Sink.asOutputStream(response);
        }
        return out;
    }

    /** Ends the exchange: the request's body and the reply are closed; what fails doing so is {@link #failure}. */
    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            drainBody();
            if (body != null) {
                body.close();
            }
            if (status >= 0) {
                replyBody().close();
            }
        } catch (IOException e) {
            broken = e;
        }
    }

    /** Why the exchange did not end well: no reply at all, or a client gone before the last byte; null if it did. */
    /** Reads and drops what is left of the request's body, {@link #DRAIN} bytes at most; a failed read ends it. */
    private void drainBody() {
        try {
            InputStream rest = body();
            byte[] dropped = new byte[8192];
            for (long left = DRAIN; left > 0; ) {
                int n = rest.read(dropped, 0, (int) Math.min(dropped.length, left));
                if (n < 0) {
                    return;
                }
                left -= n;
            }
        } catch (IOException gone) {
            // the client went away, or stalled past the idle timeout: nothing more to read
        }
    }

    synchronized Throwable failure() {
        close();
        return status < 0 ? new IOException("the handler sent no reply") : broken;
    }
}
