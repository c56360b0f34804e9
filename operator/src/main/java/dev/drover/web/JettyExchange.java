package dev.drover.web;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpPrincipal;
import com.sun.net.httpserver.HttpsExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import javax.net.ssl.SSLSession;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;

/**
 * One Jetty request as the {@link com.sun.net.httpserver.HttpExchange} the servers' handlers are written for, with
 * the JDK server's meaning of {@link #sendResponseHeaders}: length 0 streams the body, -1 sends none, more is the
 * exact length. Its TLS session is the connection's, so a handler reads the client's certificates as before.
 */
final class JettyExchange extends HttpsExchange {

    private final Request request;
    private final Response response;
    private final Headers requestHeaders = new Headers();
    private final Headers responseHeaders = new Headers();
    private final URI uri;
    private InputStream body;
    private OutputStream out;
    private int status = -1;
    private boolean closed;
    private IOException broken;

    JettyExchange(Request request, Response response) {
        this.request = request;
        this.response = response;
        for (HttpField field : request.getHeaders()) {
            requestHeaders.add(field.getName(), field.getValue());
        }
        this.uri = URI.create(request.getHttpURI().getPathQuery());
    }

    /** The Jetty request served. */
    Request request() {
        return request;
    }

    @Override
    public Headers getRequestHeaders() {
        return requestHeaders;
    }

    @Override
    public Headers getResponseHeaders() {
        return responseHeaders;
    }

    @Override
    public URI getRequestURI() {
        return uri;
    }

    @Override
    public String getRequestMethod() {
        return request.getMethod();
    }

    @Override
    public HttpContext getHttpContext() {
        throw new UnsupportedOperationException("no HttpContext: the handler is served by Jetty");
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (body != null) {
                body.close();
            }
            if (status >= 0) {
                getResponseBody().close();
            }
        } catch (IOException e) {
            broken = e;
        }
    }

    /** Why the exchange did not end well: no answer at all, or a client gone before the last byte; null if it did. */
    synchronized Throwable failure() {
        close();
        return status < 0 ? new IOException("the handler sent no response") : broken;
    }

    @Override
    public synchronized InputStream getRequestBody() {
        if (body == null) {
            body = Content.Source.asInputStream(request);
        }
        return body;
    }

    @Override
    public synchronized OutputStream getResponseBody() {
        if (out == null) {
            out = Content.Sink.asOutputStream(response);
        }
        return out;
    }

    @Override
    public synchronized void sendResponseHeaders(int code, long length) throws IOException {
        if (status >= 0) {
            throw new IOException("headers already sent");
        }
        status = code;
        response.setStatus(code);
        responseHeaders.forEach((name, values) -> {
            if (!name.equalsIgnoreCase("Content-Length") && !name.equalsIgnoreCase("Transfer-Encoding")) {
                values.forEach(v -> response.getHeaders().add(name, v));
            }
        });
        boolean head = "HEAD".equals(request.getMethod());
        if (length > 0) {
            response.getHeaders().put("Content-Length", Long.toString(length));
        } else if (length < 0 || code == 204 || code == 304 || head) {
            if (code != 204 && code != 304) {
                response.getHeaders().put("Content-Length", head && length >= 0 ? Long.toString(length) : "0");
            }
            getResponseBody().close();
            return;
        }
        if (length == 0) {
            // a streamed body: the status goes out now, as the JDK server sends it, not with the first bytes
            getResponseBody().flush();
        }
    }

    @Override
    public InetSocketAddress getRemoteAddress() {
        return inet(request.getConnectionMetaData().getRemoteSocketAddress());
    }

    @Override
    public int getResponseCode() {
        return status;
    }

    @Override
    public InetSocketAddress getLocalAddress() {
        return inet(request.getConnectionMetaData().getLocalSocketAddress());
    }

    private static InetSocketAddress inet(SocketAddress address) {
        return address instanceof InetSocketAddress i ? i : null;
    }

    @Override
    public String getProtocol() {
        return request.getConnectionMetaData().getProtocol();
    }

    @Override
    public Object getAttribute(String name) {
        return request.getAttribute(name);
    }

    @Override
    public void setAttribute(String name, Object value) {
        request.setAttribute(name, value);
    }

    @Override
    public void setStreams(InputStream i, OutputStream o) {
        throw new UnsupportedOperationException("the streams of a Jetty exchange are its own");
    }

    @Override
    public HttpPrincipal getPrincipal() {
        return null;
    }

    @Override
    public SSLSession getSSLSession() {
        return request.getAttribute(EndPoint.SslSessionData.ATTRIBUTE) instanceof EndPoint.SslSessionData ssl
                ? ssl.sslSession()
                : null;
    }
}
