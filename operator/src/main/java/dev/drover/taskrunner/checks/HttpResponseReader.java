package dev.drover.taskrunner.checks;

import dev.drover.common.UserText;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads an HTTP/1.1 response from a socket, bounded: everything before a deadline (each read waits only for what
 * is left of it, so a task that answers a byte at a time cannot hold a probe), the head (status line and headers, and
 * any interim 1xx heads before them) to {@link #MAX_HEAD} bytes, and the body to its first {@link
 * ProbeOutput#KEPT_BYTES} bytes, read plainly, by {@code Content-Length} or chunked; the rest is not read.
 */
final class HttpResponseReader {

    /** The most bytes of response heads read. */
    static final int MAX_HEAD = 16 * 1024;

    /** A status line: {@code HTTP/1.x NNN reason}; the reason may be empty or, as some servers do, left out. */
    private static final Pattern STATUS_LINE =
            Pattern.compile("HTTP/1\\.[01] ([1-9][0-9][0-9])(?: [^\\x00-\\x08\\x0a-\\x1f\\x7f]*)?");

    private static final int MAX_CHUNK_LINE = 1024;

    /** What the response said: its status code and the start of its body, cleaned. */
    record Response(int status, String body) {}

    /** The task's answer is not an HTTP/1.x response, or is too big; the message says how. */
    static final class BadResponse extends IOException {
        BadResponse(String message) {
            super(message);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final long deadline;
    private final byte[] buffer = new byte[2048];
    private int position;
    private int limit;
    private int headLeft = MAX_HEAD;

    /** Reads from {@code socket} until {@code deadline} (of {@link System#nanoTime()}). */
    HttpResponseReader(Socket socket, long deadline) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.deadline = deadline;
    }

    /** Reads the response to a request; one to a {@code HEAD} request has no body. */
    Response read(boolean headRequest) throws IOException {
        int status;
        long contentLength;
        boolean chunked;
        do {
            String statusLine = headLine();
            Matcher m = STATUS_LINE.matcher(statusLine);
            if (!m.matches()) {
                throw new BadResponse(
                        statusLine.isEmpty() && limit < 0
                                ? "the connection closed without a response"
                                : "not an HTTP/1.x response: " + UserText.quote(statusLine));
            }
            status = Integer.parseInt(m.group(1));
            contentLength = -1;
            chunked = false;
            for (String line = headLine(); !line.isEmpty(); line = headLine()) {
                int colon = line.indexOf(':');
                if (colon <= 0) {
                    throw new BadResponse("a response header is malformed: " + UserText.quote(line));
                }
                String name = line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
                String value = line.substring(colon + 1).strip();
                if (name.equals("content-length")) {
                    contentLength = parseLength(value);
                } else if (name.equals("transfer-encoding")) {
                    chunked = value.toLowerCase(Locale.ROOT).endsWith("chunked");
                }
            }
            // 1xx heads but 101 (which this request never asks for) are interim: the final one follows.
        } while (status >= 100 && status <= 199 && status != 101);
        if (headRequest || status == 204 || status == 304 || status == 101) {
            return new Response(status, "");
        }
        byte[] body = new byte[ProbeOutput.KEPT_BYTES];
        int length = chunked ? readChunked(body) : readPlain(body, contentLength);
        return new Response(status, ProbeOutput.decode(body, length));
    }

    /** Reads the body up to {@code body}'s size: {@code length} bytes of it when known, else until the end. */
    private int readPlain(byte[] body, long length) throws IOException {
        int want = length < 0 ? body.length : (int) Math.min(body.length, length);
        return readInto(body, 0, want);
    }

    /** Reads the data of chunks into {@code body} until it is full or the last chunk. */
    private int readChunked(byte[] body) throws IOException {
        int length = 0;
        while (length < body.length) {
            String line = line(MAX_CHUNK_LINE, false);
            int semicolon = line.indexOf(';');
            String size = (semicolon < 0 ? line : line.substring(0, semicolon)).strip();
            long chunk;
            try {
                chunk = Long.parseLong(size, 16);
            } catch (NumberFormatException e) {
                throw new BadResponse("a chunk of the response body is malformed: " + UserText.quote(line));
            }
            if (chunk < 0) {
                throw new BadResponse("a chunk of the response body is malformed: " + UserText.quote(line));
            }
            if (chunk == 0) {
                break;
            }
            int want = (int) Math.min(body.length - length, chunk);
            int got = readInto(body, length, want);
            length += got;
            if (got < want) {
                break; // the connection closed early: keep what came
            }
            if (want == chunk) {
                line(MAX_CHUNK_LINE, false); // the CRLF after the chunk's data
            }
        }
        return length;
    }

    /** Reads up to {@code want} bytes into {@code into} at {@code offset}; fewer when the connection ends. */
    private int readInto(byte[] into, int offset, int want) throws IOException {
        int got = 0;
        while (got < want) {
            if (position >= limit && !fill()) {
                break;
            }
            int n = Math.min(want - got, limit - position);
            System.arraycopy(buffer, position, into, offset + got, n);
            position += n;
            got += n;
        }
        return got;
    }

    /** A line of the head, counted against {@link #MAX_HEAD}. */
    private String headLine() throws IOException {
        return line(headLeft, true);
    }

    /**
     * One line without its line end (LF or CRLF), of at most {@code max} bytes; what the connection holds when it ends
     * before a line end.
     */
    private String line(int max, boolean head) throws IOException {
        StringBuilder line = new StringBuilder(64);
        int read = 0;
        while (true) {
            if (position >= limit && !fill()) {
                break;
            }
            byte b = buffer[position++];
            read++;
            if (read > max) {
                throw new BadResponse(
                        head
                                ? "the response head is longer than " + MAX_HEAD + " bytes"
                                : "a chunk line of the response body is longer than " + MAX_CHUNK_LINE + " bytes");
            }
            if (b == '\n') {
                break;
            }
            line.append((char) (b & 0xff)); // ISO-8859-1, as HTTP reads a head's bytes
        }
        if (head) {
            headLeft -= read;
        }
        int end = line.length();
        if (end > 0 && line.charAt(end - 1) == '\r') {
            line.setLength(end - 1);
        }
        return line.toString();
    }

    /** Reads more into the buffer, waiting at most until the deadline; false at the end of the connection. */
    private boolean fill() throws IOException {
        if (limit < 0) {
            return false;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new SocketTimeoutException("the response did not come in time");
        }
        socket.setSoTimeout((int) Math.clamp(TimeUnit.NANOSECONDS.toMillis(left) + 1, 1, Integer.MAX_VALUE));
        int n = in.read(buffer, 0, buffer.length);
        position = 0;
        limit = n;
        return n > 0;
    }

    private static long parseLength(String value) throws BadResponse {
        if (value.isEmpty() || value.length() > 18 || !value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new BadResponse("the response's Content-Length is not a number: " + UserText.quote(value));
        }
        return Long.parseLong(value);
    }
}
