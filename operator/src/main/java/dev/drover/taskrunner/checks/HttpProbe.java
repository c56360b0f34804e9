package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckHeader;
import dev.drover.common.UserText;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * An http check: {@code METHOD PATH} on the check's port of the node's loopback address, with the check's headers.
 * A 2xx answer passes, 429 warns, anything else (a redirect too: none is followed) is critical; the output says the
 * status code and the start of the body, {@code HTTP 503: backend down}.
 *
 * <p>Each probe opens its own connection and asks the task to close it ({@code Connection: close}), as a kubelet's
 * probe does: a small HTTP/1.1 client on a socket rather than {@link java.net.http.HttpClient}, so that nothing is
 * pooled or kept between probes, no selector thread runs, a check may set {@code Host} (which that client refuses),
 * and every part of the answer is bounded: the whole exchange by the check's timeout, the response head by {@link
 * HttpResponseReader#MAX_HEAD} bytes, the body by {@link ProbeOutput#KEPT_BYTES} (the rest is never read).
 */
final class HttpProbe implements Probe {

    private static final Pattern METHOD = Pattern.compile(Check.METHOD_PATTERN);
    private static final Pattern HEADER_NAME = Pattern.compile(CheckHeader.NAME_PATTERN);
    private static final Pattern HEADER_VALUE = Pattern.compile(CheckHeader.VALUE_PATTERN);

    /** Headers that frame the exchange, which the probe sets itself (a spec the API server did not check may hold one). */
    private static final Set<String> FRAMING = CheckHeader.RESERVED;

    static final String USER_AGENT = "Drover-Check/1";

    @Override
    public ProbeResult run(Check check, CheckProber.Target target) throws InterruptedException {
        Optional<InetSocketAddress> to = target.address(check.getPort());
        if (to.isEmpty()) {
            return ProbeResult.critical(TcpProbe.noPort(check));
        }
        byte[] request;
        try {
            request = request(check, to.get());
        } catch (IllegalArgumentException e) {
            return ProbeResult.critical(e.getMessage());
        }
        Duration timeout = check.effectiveTimeout();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Socket socket = new Socket()) {
            socket.connect(to.get(), TcpProbe.timeoutMillis(timeout));
            socket.setTcpNoDelay(true);
            socket.getOutputStream().write(request);
            HttpResponseReader.Response response = new HttpResponseReader(socket, deadline)
                    .read(check.effectiveMethod().equals("HEAD"));
            return result(response);
        } catch (HttpResponseReader.BadResponse e) {
            return ProbeResult.critical(e.getMessage());
        } catch (IOException e) {
            if (Thread.interrupted()) {
                throw new InterruptedException("abandoned");
            }
            return ProbeResult.critical(TcpProbe.failure(e, timeout));
        }
    }

    static ProbeResult result(HttpResponseReader.Response response) {
        String output = ProbeOutput.clean(
                "HTTP " + response.status() + (response.body().isEmpty() ? "" : ": " + response.body()));
        int status = response.status();
        if (status >= 200 && status <= 299) {
            return ProbeResult.passing(output);
        }
        return status == 429 ? ProbeResult.warning(output) : ProbeResult.critical(output);
    }

    /**
     * The request's bytes. Throws {@link IllegalArgumentException} saying what to change for a method, path or
     * header that the API server should have refused, or that only the probe may set.
     */
    static byte[] request(Check check, InetSocketAddress to) {
        String method = check.effectiveMethod();
        if (!METHOD.matcher(method).matches()) {
            throw new IllegalArgumentException("method " + UserText.quote(method)
                    + " is not one an http check may use (" + Check.METHOD_PATTERN + ")");
        }
        String path = check.effectivePath();
        if (path.length() > Check.MAX_PATH
                || !path.startsWith("/")
                || path.chars().anyMatch(c -> c <= 0x20 || c == 0x7f)) {
            throw new IllegalArgumentException("path " + UserText.quote(path) + " is not an absolute path of at most "
                    + Check.MAX_PATH + " characters without spaces");
        }
        StringBuilder head = new StringBuilder(256)
                .append(method)
                .append(' ')
                .append(encodePath(path))
                .append(" HTTP/1.1\r\n");
        var headers = check.effectiveHeaders();
        if (headers.size() > Check.MAX_HEADERS) {
            throw new IllegalArgumentException(
                    "the check has " + headers.size() + " headers, more than " + Check.MAX_HEADERS);
        }
        Set<String> given = new java.util.HashSet<>();
        for (CheckHeader h : headers) {
            String name = h.getName() == null ? "" : h.getName();
            String value = h.getValue() == null ? "" : h.getValue();
            if (name.length() > CheckHeader.MAX_NAME
                    || !HEADER_NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("header name " + UserText.quote(name) + " is not an HTTP token");
            }
            if (value.length() > CheckHeader.MAX_VALUE
                    || !HEADER_VALUE.matcher(value).matches()) {
                throw new IllegalArgumentException("the value of header " + UserText.quote(name)
                        + " holds a control character or is longer than " + CheckHeader.MAX_VALUE);
            }
            String lower = name.toLowerCase(Locale.ROOT);
            if (FRAMING.contains(lower)) {
                throw new IllegalArgumentException(
                        "header " + UserText.quote(name) + " is set by the probe itself; remove it from the check");
            }
            given.add(lower);
            head.append(name).append(": ").append(value.strip()).append("\r\n");
        }
        if (!given.contains("host")) {
            head.append("Host: ")
                    .append(to.getAddress().getHostAddress())
                    .append(':')
                    .append(to.getPort())
                    .append("\r\n");
        }
        if (!given.contains("user-agent")) {
            head.append("User-Agent: ").append(USER_AGENT).append("\r\n");
        }
        if (!given.contains("accept")) {
            head.append("Accept: */*\r\n");
        }
        if (method.equals("POST") || method.equals("PUT") || method.equals("PATCH")) {
            head.append("Content-Length: 0\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        return head.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** {@code path} with its non-ASCII characters percent-encoded as UTF-8, so that the request line is ASCII. */
    static String encodePath(String path) {
        if (path.chars().allMatch(c -> c < 0x7f)) {
            return path;
        }
        StringBuilder out = new StringBuilder(path.length() + 16);
        for (byte b : path.getBytes(StandardCharsets.UTF_8)) {
            if (b >= 0) {
                out.append((char) b);
            } else {
                out.append('%').append(String.format("%02X", b & 0xff));
            }
        }
        return out.toString();
    }
}
