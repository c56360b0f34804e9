package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.web.Exchange;
import java.io.IOException;
import java.io.InputStream;

/**
 * A request's body as the API server takes it in: read up to its bound, a protobuf body turned into JSON, refused
 * when too deep or not JSON, with kube-apiserver's codes and messages. What a refused body leaves unread is drained
 * so that the client hears the answer.
 */
final class RequestBodies {

    private static final ObjectMapper JSON = NestingDepth.mapper();

    /** The API server's bound on a request body (3 MiB): larger ones are refused before they are read whole. */
    static final int MAX_BODY_BYTES = 3 << 20;

    /**
     * How much of a refused body is read and dropped before the 413 goes out: a client still sending when the
     * connection closes gets a reset instead of the answer (seen as a flaky test under load). Beyond this the
     * connection is closed regardless, so a huge body still costs only this much.
     */
    static final int DRAIN_BYTES = 4 << 20;

    private RequestBodies() {}

    static JsonNode parse(byte[] raw) {
        NestingDepth.check(raw, null);
        try {
            return JSON.readTree(raw);
        } catch (IOException e) {
            throw new ApiFront.ApiError(400, "BadRequest", "the request body is not JSON: " + e.getMessage());
        }
    }

    /** An object of {@code kind} (a review's, a create's): too deep, refused with kube-apiserver's message. */
    static ObjectNode object(byte[] raw, String kind) {
        NestingDepth.check(raw, kind);
        if (!(parse(raw) instanceof ObjectNode object)) {
            throw new ApiFront.ApiError(400, "BadRequest", "the request body is not a JSON object");
        }
        return object;
    }

    /** The body of {@code ex}, as JSON bytes; one over {@link #MAX_BODY_BYTES} is a 413. */
    static byte[] body(Exchange ex) throws IOException {
        byte[] raw = ex.body().readNBytes(MAX_BODY_BYTES + 1);
        if (raw.length > MAX_BODY_BYTES) {
            drain(ex.body(), DRAIN_BYTES);
            throw new ApiFront.ApiError(
                    413, "RequestEntityTooLarge", "Request entity too large: limit is " + MAX_BODY_BYTES);
        }
        String contentType = ex.header("Content-Type");
        return contentType != null && contentType.startsWith("application/vnd.kubernetes.protobuf")
                ? ProtobufBodies.toJson(raw)
                : raw;
    }

    /** Reads and drops up to {@code limit} bytes of {@code in}, less when it ends first. */
    static void drain(InputStream in, long limit) throws IOException {
        byte[] buffer = new byte[64 << 10];
        for (long left = limit; left > 0; ) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) {
                return;
            }
            left -= n;
        }
    }
}
