package dev.drover.local;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamWriteConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HexFormat;
import java.util.Map;

/**
 * How deep a JSON body may nest, as kube-apiserver decides it: its decoder (Go's encoding/json, and
 * sigs.k8s.io/json after it) refuses an object or array opened past {@link #MAX} levels, the body's own braces the
 * first, and everything it takes it stores and serves back. The server's own parser and writer therefore take
 * {@link #SERVED} levels: a stored object, its managedFields (which repeat its shape a few levels down), and what a
 * list, a table or a watch event wraps it in. Jackson's default, 1 000, would otherwise store an object that no
 * list could then write.
 */
final class NestingDepth {

    /** encoding/json's maxNestingDepth. */
    static final int MAX = 10_000;
    /** What the server's mapper reads and writes: twice {@link #MAX}, room for managedFields and any wrapping. */
    static final int SERVED = 2 * MAX;
    /**
     * The stack of a thread that handles requests ({@link DeepStacks}): Jackson's copies, comparisons and writes of a
     * tree, the schema's and managedFields' walks recurse once or more a level, a few hundred bytes a call. Reserved,
     * not used, until an object that deep comes.
     */
    static final long STACK_BYTES = 64L << 20;

    private static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(
                    StreamReadConstraints.builder().maxNestingDepth(SERVED).build())
            .streamWriteConstraints(
                    StreamWriteConstraints.builder().maxNestingDepth(SERVED).build())
            .build();

    private NestingDepth() {}

    /** A mapper for the server's objects: one of these everywhere a stored object is read or written. */
    static ObjectMapper mapper() {
        return new ObjectMapper(FACTORY);
    }

    /** The parser and writer factory {@link #mapper()} uses, for a mapper built otherwise. */
    static JsonFactory factory() {
        return FACTORY;
    }

    /**
     * Refuses a request body nested deeper than {@link #MAX}, with the 400 kube-apiserver gives for an object of
     * {@code kind} (its decoder fails before it learns the body's kind, so the message says it is unrecognized);
     * without a kind (a patch), as a body that is not JSON.
     */
    static void check(byte[] body, String kind) {
        int at = tooDeepAt(body);
        if (at >= 0) {
            throw new ApiFront.ApiError(
                    400,
                    "BadRequest",
                    kind == null
                            ? "the request body is not JSON: " + decodeError(body[at])
                            : "the object provided is unrecognized (must be of type " + kind + "): couldn't get"
                                    + " version/kind; json parse error: " + decodeError(body[at]) + " ("
                                    + summary(body) + ")");
        }
    }

    /**
     * Refuses an object to be stored that nests deeper than {@link #MAX}, as a patch can make one (a JSON patch adds
     * a deep value at a deep path): kube-apiserver decodes the patched object and answers 422 naming the patch (its
     * whole text too, which this leaves out).
     */
    static void checkPatched(JsonNode object) {
        if (of(object) > MAX) {
            throw new ApiFront.ApiError(
                    422,
                    "Invalid",
                    "\"\" is invalid: patch: Invalid value: \"(the patched object, nested more than " + MAX
                            + " levels)\": couldn't get version/kind; json parse error: " + decodeError((byte) '{'));
        }
    }

    /** Go's SyntaxError text for the brace or bracket that went past {@link #MAX}. */
    static String decodeError(byte opened) {
        return "invalid character '" + (char) opened + "' exceeded max depth";
    }

    /** The offset of the first brace or bracket that opens level {@link #MAX} + 1, or -1; strings are skipped. */
    static int tooDeepAt(byte[] body) {
        int depth = 0;
        boolean inString = false;
        for (int i = 0; i < body.length; i++) {
            byte b = body[i];
            if (inString) {
                if (b == '\\') {
                    i++;
                } else if (b == '"') {
                    inString = false;
                }
            } else if (b == '"') {
                inString = true;
            } else if (b == '{' || b == '[') {
                if (++depth > MAX) {
                    return i;
                }
            } else if (b == '}' || b == ']') {
                depth--;
            }
        }
        return -1;
    }

    /**
     * How many levels {@code node} nests, itself the first when it is an object or array (no recursion), leaving out
     * its {@code metadata.managedFields}: the server writes those after it decoded the object, a few levels deeper
     * than the fields they name.
     */
    static int of(JsonNode node) {
        JsonNode managedFields = node.path("metadata").path("managedFields");
        int deepest = 0;
        Deque<Map.Entry<JsonNode, Integer>> todo = new ArrayDeque<>();
        todo.push(Map.entry(node, 1));
        while (!todo.isEmpty()) {
            Map.Entry<JsonNode, Integer> next = todo.pop();
            if (next.getKey().isContainerNode()) {
                deepest = Math.max(deepest, next.getValue());
                for (JsonNode child : next.getKey()) {
                    if (child != managedFields) {
                        todo.push(Map.entry(child, next.getValue() + 1));
                    }
                }
            }
        }
        return deepest;
    }

    /** apiserver's summarizeData(body, 30): an object's first 30 bytes as text, anything else as hex. */
    private static String summary(byte[] body) {
        if (body.length == 0) {
            return "<empty>";
        }
        int n = Math.min(body.length, 30);
        String shown = body[0] == '{'
                ? new String(body, 0, n, StandardCharsets.UTF_8)
                : HexFormat.of().formatHex(body, 0, n);
        return body.length > 30 ? shown + " ..." : shown;
    }
}
