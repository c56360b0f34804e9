package dev.drover.podresources;

import java.io.ByteArrayOutputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.api.Stream;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.frames.DataFrame;
import org.eclipse.jetty.http2.frames.HeadersFrame;
import org.eclipse.jetty.http2.frames.ResetFrame;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Transport;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * Asks the kubelet's PodResources API ({@code v1.PodResourcesLister/List}) which devices the node's Pods hold: one
 * gRPC unary call over HTTP/2 without TLS (h2c, as the kubelet serves it) on its Unix socket, a new connection per
 * call. HTTP/2 and HPACK are Jetty's; the gRPC framing (a 5-byte prefix: a compression flag and a big-endian length;
 * the status in the trailers) and the protobuf ({@link ListResponse}) are read here, bounded: an answer over
 * {@link #MAX_MESSAGE} bytes is refused as it arrives. Connecting and the call together take at most the deadline.
 * Jetty's threads (a selector on a virtual thread, one scheduler thread) live until {@link #close}.
 */
public final class PodResourcesClient implements AutoCloseable {

    /** The kubelet's socket, where the kubelet serves it by default. */
    public static final Path DEFAULT_SOCKET = Path.of("/var/lib/kubelet/pod-resources/kubelet.sock");
    /** The largest answer read: 16 MiB (the kubelet's own bound is the gRPC default, 4 MiB, times 4). */
    public static final int MAX_MESSAGE = 16 << 20;

    static final String PATH = "/v1.PodResourcesLister/List";
    /** A {@code ListPodResourcesRequest} has no fields: its message is empty, so its frame is 5 zero bytes. */
    private static final byte[] EMPTY_REQUEST = new byte[5];

    private final Path socket;
    private final Duration deadline;
    private final HTTP2Client client;

    /** @param deadline the most connecting and calling may take together */
    public PodResourcesClient(Path socket, Duration deadline) {
        this.socket = socket;
        this.deadline = deadline;
        ClientConnector connector = new ClientConnector();
        connector.setExecutor(new VirtualThreadPool());
        connector.setScheduler(new ScheduledExecutorScheduler("pod-resources-scheduler", true));
        connector.setSelectors(1);
        this.client = new HTTP2Client(connector);
        client.setConnectTimeout(deadline.toMillis());
        client.setIdleTimeout(deadline.toMillis());
        try {
            client.start();
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the HTTP/2 client of the PodResources API: " + e, e);
        }
    }

    public Path socket() {
        return socket;
    }

    /** The devices the node's Pods hold, container by container. */
    public List<PodDevices> list() throws PodResourcesException, InterruptedException {
        long end = System.nanoTime() + deadline.toNanos();
        Session session = null;
        try {
            session = client.connect(
                            new Transport.TCPUnix(socket),
                            null,
                            UnixDomainSocketAddress.of(socket),
                            new Session.Listener() {})
                    .get(deadline.toNanos(), TimeUnit.NANOSECONDS);
            Answer answer = new Answer();
            MetaData.Request request = new MetaData.Request(
                    "POST",
                    HttpURI.from("http://localhost" + PATH),
                    HttpVersion.HTTP_2,
                    HttpFields.build()
                            .put("content-type", "application/grpc")
                            .put("te", "trailers")
                            .asImmutable());
            Stream stream = session.newStream(new HeadersFrame(request, null, false), answer)
                    .get(remaining(end), TimeUnit.NANOSECONDS);
            stream.data(new DataFrame(stream.getId(), ByteBuffer.wrap(EMPTY_REQUEST), true), Callback.NOOP);
            byte[] body = answer.done.get(remaining(end), TimeUnit.NANOSECONDS);
            return ListResponse.decode(message(body));
        } catch (TimeoutException e) {
            throw failure("did not answer within " + deadline.toMillis() + " ms", null);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof PodResourcesException p) {
                throw failure(p.getMessage(), null);
            }
            throw failure("cannot be reached: " + cause, cause);
        } catch (PodResourcesException e) {
            throw failure("answered what cannot be read: " + e.getMessage(), null);
        } finally {
            if (session != null) {
                session.close(ErrorCode.NO_ERROR.code, null, Callback.NOOP);
            }
        }
    }

    private PodResourcesException failure(String what, Throwable cause) {
        return new PodResourcesException("the kubelet's PodResources API at " + socket + " " + what, cause);
    }

    private static long remaining(long end) {
        return Math.max(0, end - System.nanoTime());
    }

    /** The one message of a unary answer, out of its gRPC frame. */
    static byte[] message(byte[] body) throws PodResourcesException {
        if (body.length < 5) {
            throw new PodResourcesException(
                    "its gRPC frame has " + body.length + " bytes, less than its 5-byte prefix");
        }
        if (body[0] != 0) {
            throw new PodResourcesException(
                    "its gRPC message is compressed (flag " + body[0] + "), which was not asked for");
        }
        long n = ((body[1] & 0xffL) << 24) | ((body[2] & 0xff) << 16) | ((body[3] & 0xff) << 8) | (body[4] & 0xff);
        if (n > MAX_MESSAGE) {
            throw new PodResourcesException("its gRPC message of " + n + " bytes is over the " + MAX_MESSAGE + " read");
        }
        if (n != body.length - 5L) {
            throw new PodResourcesException("its gRPC frame says " + n + " bytes, and " + (body.length - 5) + " came");
        }
        byte[] out = new byte[(int) n];
        System.arraycopy(body, 5, out, 0, out.length);
        return out;
    }

    /** The answer of one call: its body, bounded, complete when the trailers (or a trailers-only answer) came. */
    private static final class Answer implements Stream.Listener {
        final CompletableFuture<byte[]> done = new CompletableFuture<>();
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        private HttpFields trailers;

        @Override
        public synchronized void onHeaders(Stream stream, HeadersFrame frame) {
            MetaData md = frame.getMetaData();
            if (md instanceof MetaData.Response response) {
                if (response.getStatus() != 200) {
                    fail(stream, "answered HTTP status " + response.getStatus() + ", not 200");
                } else if (frame.isEndStream()) {
                    finish(response.getHttpFields()); // a trailers-only answer: the status is in the headers
                } else {
                    stream.demand();
                }
            } else {
                // the trailers may be told before the DATA frames ahead of them are read: the answer is complete
                // once they are, at the end of the stream
                trailers = md.getHttpFields();
                if (read(stream) && !done.isDone()) {
                    stream.demand();
                }
            }
        }

        @Override
        public synchronized void onDataAvailable(Stream stream) {
            if (read(stream) && !done.isDone()) {
                stream.demand();
            }
        }

        /** Reads what the stream has queued; false when the answer is over (too long, or ended). */
        private boolean read(Stream stream) {
            while (!done.isDone()) {
                Stream.Data data = stream.readData();
                if (data == null) {
                    return true;
                }
                DataFrame frame = data.frame();
                ByteBuffer bytes = frame.getByteBuffer();
                if (body.size() + (long) bytes.remaining() > MAX_MESSAGE + 5L) {
                    data.release();
                    fail(stream, "answered more than " + MAX_MESSAGE + " bytes, which is refused");
                    return false;
                }
                byte[] chunk = new byte[bytes.remaining()];
                bytes.get(chunk);
                body.writeBytes(chunk);
                data.release();
                if (frame.isEndStream()) {
                    finish(trailers);
                    return false;
                }
            }
            return false;
        }

        @Override
        public void onReset(Stream stream, ResetFrame frame, Callback callback) {
            done.completeExceptionally(new PodResourcesException(
                    "reset the call (HTTP/2 error " + ErrorCode.toString(frame.getError(), "?") + ")"));
            callback.succeeded();
        }

        @Override
        public void onFailure(Stream stream, int error, String reason, Throwable failure, Callback callback) {
            done.completeExceptionally(new PodResourcesException("failed the call: " + failure));
            callback.succeeded();
        }

        private void finish(HttpFields fields) {
            String status = fields == null ? null : fields.get("grpc-status");
            if (status == null) {
                done.completeExceptionally(new PodResourcesException("answered without a grpc-status"));
            } else if (!status.strip().equals("0")) {
                String message = GrpcStatus.message(fields.get("grpc-message"));
                done.completeExceptionally(new PodResourcesException("answered gRPC status " + GrpcStatus.named(status)
                        + (message.isEmpty() ? "" : ": " + message)));
            } else {
                done.complete(body.toByteArray());
            }
        }

        private void fail(Stream stream, String why) {
            done.completeExceptionally(new PodResourcesException(why));
            stream.reset(new ResetFrame(stream.getId(), ErrorCode.CANCEL_STREAM_ERROR.code), Callback.NOOP);
        }
    }

    @Override
    public void close() {
        try {
            client.stop();
        } catch (Exception e) {
            // stopping the client's threads failed: nothing is left to do with them
        }
    }
}
