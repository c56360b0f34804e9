package dev.drover.local;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * The request bodies kubectl sends only as Kubernetes protobuf ({@code application/vnd.kubernetes.protobuf}: the
 * magic {@code k8s\0} and a {@code runtime.Unknown} wrapping the object), read into the JSON the server works on.
 * kubectl's typed commands ({@code create token}, {@code create serviceaccount}, {@code auth whoami}, {@code auth
 * can-i}, ...) send nothing else, and a 415 makes them fail rather than fall back. Only the kinds below are read,
 * with only the fields listed (their numbers from the Kubernetes {@code generated.proto} files); any other kind is a
 * 415, as from a server that cannot decode it.
 */
final class ProtobufBodies {

    private static final ObjectMapper JSON = NestingDepth.mapper();
    private static final byte[] MAGIC = {'k', '8', 's', 0};

    private enum Type {
        STRING,
        BYTES,
        INT,
        BOOL,
        STRINGS,
        STRING_MAP,
        BYTES_MAP,
        MESSAGE
    }

    private record Field(String name, Type type, Map<Integer, Field> message) {
        static Field of(String name, Type type) {
            return new Field(name, type, Map.of());
        }

        static Field message(String name, Map<Integer, Field> fields) {
            return new Field(name, Type.MESSAGE, fields);
        }
    }

    private static final Map<Integer, Field> OBJECT_META = Map.of(
            1, Field.of("name", Type.STRING),
            2, Field.of("generateName", Type.STRING),
            3, Field.of("namespace", Type.STRING),
            11, Field.of("labels", Type.STRING_MAP),
            12, Field.of("annotations", Type.STRING_MAP));
    private static final Field METADATA = Field.message("metadata", OBJECT_META);

    private static final Map<Integer, Field> RESOURCE_ATTRIBUTES = Map.of(
            1, Field.of("namespace", Type.STRING),
            2, Field.of("verb", Type.STRING),
            3, Field.of("group", Type.STRING),
            4, Field.of("version", Type.STRING),
            5, Field.of("resource", Type.STRING),
            6, Field.of("subresource", Type.STRING),
            7, Field.of("name", Type.STRING));
    private static final Map<Integer, Field> NON_RESOURCE_ATTRIBUTES =
            Map.of(1, Field.of("path", Type.STRING), 2, Field.of("verb", Type.STRING));

    /** Kind (group/version/kind as in the wrapper's TypeMeta) → the object's fields. */
    private static final Map<String, Map<Integer, Field>> KINDS = Map.of(
            "v1/ServiceAccount", Map.of(1, METADATA, 4, Field.of("automountServiceAccountToken", Type.BOOL)),
            "v1/Namespace", Map.of(1, METADATA),
            "v1/ConfigMap",
                    Map.of(
                            1,
                            METADATA,
                            2,
                            Field.of("data", Type.STRING_MAP),
                            3,
                            Field.of("binaryData", Type.BYTES_MAP)),
            "v1/Secret",
                    Map.of(
                            1, METADATA,
                            2, Field.of("data", Type.BYTES_MAP),
                            3, Field.of("type", Type.STRING),
                            4, Field.of("stringData", Type.STRING_MAP)),
            "authentication.k8s.io/v1/TokenRequest",
                    Map.of(
                            1,
                            METADATA,
                            2,
                            Field.message(
                                    "spec",
                                    Map.of(
                                            1, Field.of("audiences", Type.STRINGS),
                                            3,
                                                    Field.message(
                                                            "boundObjectRef",
                                                            Map.of(
                                                                    1, Field.of("kind", Type.STRING),
                                                                    2, Field.of("apiVersion", Type.STRING),
                                                                    3, Field.of("name", Type.STRING),
                                                                    4, Field.of("uid", Type.STRING))),
                                            4, Field.of("expirationSeconds", Type.INT)))),
            "authentication.k8s.io/v1/SelfSubjectReview", Map.of(1, METADATA),
            "authorization.k8s.io/v1/SelfSubjectAccessReview",
                    Map.of(
                            1,
                            METADATA,
                            2,
                            Field.message(
                                    "spec",
                                    Map.of(
                                            1, Field.message("resourceAttributes", RESOURCE_ATTRIBUTES),
                                            2, Field.message("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES)))),
            "authorization.k8s.io/v1/SelfSubjectRulesReview",
                    Map.of(1, METADATA, 2, Field.message("spec", Map.of(1, Field.of("namespace", Type.STRING)))));

    private ProtobufBodies() {}

    /** The body as JSON bytes; a body that is not one of the kinds read here is a 415. */
    static byte[] toJson(byte[] body) {
        try {
            if (body.length < MAGIC.length || !java.util.Arrays.equals(body, 0, 4, MAGIC, 0, 4)) {
                throw new IllegalArgumentException("no k8s magic");
            }
            Reader unknown = new Reader(body, MAGIC.length, body.length);
            String apiVersion = "";
            String kind = "";
            byte[] raw = null;
            while (unknown.more()) {
                int tag = unknown.varint32();
                switch (tag >>> 3) {
                    case 1 -> {
                        Reader typeMeta = unknown.nested();
                        while (typeMeta.more()) {
                            int t = typeMeta.varint32();
                            switch (t >>> 3) {
                                case 1 -> apiVersion = typeMeta.string();
                                case 2 -> kind = typeMeta.string();
                                default -> typeMeta.skip(t & 7);
                            }
                        }
                    }
                    case 2 -> raw = unknown.bytes();
                    default -> unknown.skip(tag & 7);
                }
            }
            Map<Integer, Field> fields = KINDS.get(apiVersion + "/" + kind);
            if (fields == null || raw == null) {
                throw unsupported();
            }
            ObjectNode object =
                    JSON.createObjectNode().put("apiVersion", apiVersion).put("kind", kind);
            read(new Reader(raw, 0, raw.length), fields, object);
            return JSON.writeValueAsBytes(object);
        } catch (IllegalArgumentException | IndexOutOfBoundsException | java.io.IOException e) {
            throw unsupported();
        }
    }

    private static void read(Reader in, Map<Integer, Field> fields, ObjectNode out) {
        while (in.more()) {
            int tag = in.varint32();
            Field f = fields.get(tag >>> 3);
            if (f == null) {
                in.skip(tag & 7);
                continue;
            }
            switch (f.type()) {
                case STRING -> out.put(f.name(), in.string());
                case BYTES -> out.put(f.name(), Base64.getEncoder().encodeToString(in.bytes()));
                case INT -> out.put(f.name(), in.varint());
                case BOOL -> out.put(f.name(), in.varint() != 0);
                case STRINGS -> {
                    ArrayNode list = out.has(f.name()) ? (ArrayNode) out.get(f.name()) : out.putArray(f.name());
                    list.add(in.string());
                }
                case STRING_MAP, BYTES_MAP -> {
                    Reader entry = in.nested();
                    String key = "";
                    String value = "";
                    while (entry.more()) {
                        int t = entry.varint32();
                        switch (t >>> 3) {
                            case 1 -> key = entry.string();
                            case 2 ->
                                value = f.type() == Type.STRING_MAP
                                        ? entry.string()
                                        : Base64.getEncoder().encodeToString(entry.bytes());
                            default -> entry.skip(t & 7);
                        }
                    }
                    out.withObject(f.name()).put(key, value);
                }
                case MESSAGE -> read(in.nested(), f.message(), out.withObject(f.name()));
            }
        }
    }

    private static ApiFront.ApiError unsupported() {
        return new ApiFront.ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                        + "application/json, application/yaml, application/merge-patch+json, "
                        + "application/json-patch+json, application/strategic-merge-patch+json");
    }

    /** Protobuf wire format over {@code buf[pos, end)}; every read is bounds-checked. */
    private static final class Reader {
        private final byte[] buf;
        private int pos;
        private final int end;

        Reader(byte[] buf, int pos, int end) {
            if (pos < 0 || end > buf.length || pos > end) {
                throw new IllegalArgumentException("bad bounds");
            }
            this.buf = buf;
            this.pos = pos;
            this.end = end;
        }

        boolean more() {
            return pos < end;
        }

        long varint() {
            long value = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                if (pos >= end) {
                    throw new IllegalArgumentException("truncated varint");
                }
                byte b = buf[pos++];
                value |= (long) (b & 0x7f) << shift;
                if ((b & 0x80) == 0) {
                    return value;
                }
            }
            throw new IllegalArgumentException("varint too long");
        }

        int varint32() {
            long v = varint();
            if (v < 0 || v > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("bad tag");
            }
            return (int) v;
        }

        byte[] bytes() {
            int length = varint32();
            if (length > end - pos) {
                throw new IllegalArgumentException("truncated field");
            }
            byte[] out = java.util.Arrays.copyOfRange(buf, pos, pos + length);
            pos += length;
            return out;
        }

        String string() {
            return new String(bytes(), StandardCharsets.UTF_8);
        }

        Reader nested() {
            int length = varint32();
            if (length > end - pos) {
                throw new IllegalArgumentException("truncated message");
            }
            Reader r = new Reader(buf, pos, pos + length);
            pos += length;
            return r;
        }

        void skip(int wireType) {
            switch (wireType) {
                case 0 -> varint();
                case 1 -> advance(8);
                case 2 -> advance(varint32());
                case 5 -> advance(4);
                default -> throw new IllegalArgumentException("unsupported wire type " + wireType);
            }
        }

        private void advance(int n) {
            if (n > end - pos) {
                throw new IllegalArgumentException("truncated");
            }
            pos += n;
        }
    }
}
