package dev.drover.podresources;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.unixdomain.server.UnixDomainServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * The kubelet's PodResources API, served by a fake for tests: h2c on a Unix socket, answering
 * {@code v1.PodResourcesLister/List} with the containers and devices it is told ({@link #hold}), its protobuf and
 * gRPC frame written here by hand. It can also answer a gRPC error ({@link #failWith}) or any bytes as the
 * answer's body ({@link #answerRaw}). Used by the operator's tests and, through the test jar, the e2e tests.
 */
public final class FakePodResources implements AutoCloseable {

    /** Devices of one resource one container of a Pod holds. */
    public record Held(String namespace, String pod, String container, String resource, List<String> deviceIds) {
        public Held {
            deviceIds = List.copyOf(deviceIds);
        }
    }

    private sealed interface Reply {}

    private record Listing(List<Held> held) implements Reply {}

    private record Failure(int status, String message) implements Reply {}

    private record Raw(byte[] body) implements Reply {}

    private record Stall() implements Reply {}

    private static final int CHUNK = 8192;

    private final Path socket;
    private final Server server;
    private final AtomicReference<Reply> reply = new AtomicReference<>(new Listing(List.of()));
    private final AtomicInteger calls = new AtomicInteger();

    private FakePodResources(Path socket) throws Exception {
        this.socket = socket;
        this.server = new Server();
        // the server's threads are named fake-kubelet so that tests of the client's threads can tell them apart
        UnixDomainServerConnector connector = new UnixDomainServerConnector(
                server,
                null,
                new org.eclipse.jetty.util.thread.ScheduledExecutorScheduler("fake-kubelet-scheduler", true),
                null,
                -1,
                -1,
                new HTTP2CServerConnectionFactory());
        connector.setUnixDomainPath(socket);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                calls.incrementAndGet();
                answer(request, response, callback);
                return true;
            }
        });
        server.start();
    }

    /** Serves the API on {@code socket} (made here; removed on {@link #close}). */
    public static FakePodResources start(Path socket) throws Exception {
        return new FakePodResources(socket);
    }

    public Path socket() {
        return socket;
    }

    /** From now on the listing says these containers hold these devices (and nothing else holds any). */
    public void hold(List<Held> held) {
        reply.set(new Listing(held));
    }

    /** Shorthand: one Pod's one container holds {@code ids} of {@code resource}. */
    public void hold(String namespace, String pod, String resource, String... ids) {
        hold(List.of(new Held(namespace, pod, "main", resource, List.of(ids))));
    }

    /** From now on every call fails with gRPC {@code status} and {@code message}. */
    public void failWith(int status, String message) {
        reply.set(new Failure(status, message));
    }

    /** From now on every call is answered {@code body} (as is: no gRPC frame added) and grpc-status 0. */
    public void answerRaw(byte[] body) {
        reply.set(new Raw(body.clone()));
    }

    /** From now on calls are never answered (until {@link #close}). */
    public void stall() {
        reply.set(new Stall());
    }

    /** How many calls came. */
    public int calls() {
        return calls.get();
    }

    private void answer(Request request, Response response, Callback callback) {
        response.setStatus(200);
        response.getHeaders().put("content-type", "application/grpc");
        Reply r = reply.get();
        if (r instanceof Stall) {
            return; // the callback is failed when the server stops
        }
        if (!Objects.equals(Request.getPathInContext(request), PodResourcesClient.PATH)) {
            r = new Failure(12, "unknown method " + Request.getPathInContext(request));
        }
        HttpFields.Mutable trailers = HttpFields.build();
        byte[] body;
        switch (r) {
            case Listing l -> {
                body = framed(encode(l.held()));
                trailers.put("grpc-status", "0");
            }
            case Failure f -> {
                body = new byte[0];
                trailers.put("grpc-status", Integer.toString(f.status()));
                trailers.put("grpc-message", percentEncoded(f.message()));
            }
            case Raw raw -> {
                body = raw.body();
                trailers.put("grpc-status", "0");
            }
            case Stall s -> throw new AssertionError("answered above");
        }
        response.setTrailersSupplier(() -> trailers);
        // in chunks: one last write of a large buffer sent its first 16 KiB and then the trailers (Jetty 12.1.14)
        try {
            for (int at = 0; at < body.length; at += CHUNK) {
                Callback.Completable written = new Callback.Completable();
                response.write(false, ByteBuffer.wrap(body, at, Math.min(CHUNK, body.length - at)), written);
                written.get();
            }
        } catch (InterruptedException | ExecutionException e) {
            callback.failed(e);
            return;
        }
        response.write(true, ByteBuffer.allocate(0), callback);
    }

    /** A message in its gRPC frame: not compressed, its length big-endian. */
    public static byte[] framed(byte[] message) {
        ByteBuffer b = ByteBuffer.allocate(5 + message.length);
        b.put((byte) 0).putInt(message.length).put(message);
        return b.array();
    }

    /** A {@code ListPodResourcesResponse}: one {@code PodResources} per Pod, its containers in the order given. */
    public static byte[] encode(List<Held> held) {
        ByteArrayOutputStream response = new ByteArrayOutputStream();
        held.stream().map(h -> List.of(h.namespace(), h.pod())).distinct().forEach(pod -> {
            ByteArrayOutputStream podResources = new ByteArrayOutputStream();
            string(podResources, 1, pod.get(1));
            string(podResources, 2, pod.get(0));
            held.stream()
                    .filter(h -> h.namespace().equals(pod.get(0)) && h.pod().equals(pod.get(1)))
                    .forEach(h -> {
                        ByteArrayOutputStream devices = new ByteArrayOutputStream();
                        string(devices, 1, h.resource());
                        h.deviceIds().forEach(id -> string(devices, 2, id));
                        ByteArrayOutputStream container = new ByteArrayOutputStream();
                        string(container, 1, h.container());
                        bytes(container, 2, devices.toByteArray());
                        varintField(container, 3, 7); // a cpu_id: a field the reader skips
                        bytes(podResources, 3, container.toByteArray());
                    });
            bytes(response, 1, podResources.toByteArray());
        });
        return response.toByteArray();
    }

    private static void string(ByteArrayOutputStream out, int field, String value) {
        bytes(out, field, value.getBytes(StandardCharsets.UTF_8));
    }

    private static void bytes(ByteArrayOutputStream out, int field, byte[] value) {
        varint(out, (long) field << 3 | 2);
        varint(out, value.length);
        out.writeBytes(value);
    }

    private static void varintField(ByteArrayOutputStream out, int field, long value) {
        varint(out, (long) field << 3);
        varint(out, value);
    }

    private static void varint(ByteArrayOutputStream out, long v) {
        while ((v & ~0x7fL) != 0) {
            out.write((int) (v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out.write((int) v);
    }

    private static String percentEncoded(String message) {
        StringBuilder b = new StringBuilder();
        for (byte x : message.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if (c >= 0x20 && c < 0x7f && c != '%') {
                b.append((char) c);
            } else {
                b.append('%').append(String.format("%02X", c));
            }
        }
        return b.toString();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
