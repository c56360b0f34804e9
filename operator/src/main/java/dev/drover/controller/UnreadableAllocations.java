package dev.drover.controller;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.util.TokenBuffer;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.validation.Violation;
import dev.drover.common.UserText;
import dev.drover.state.Jackson;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Allocations the Java model cannot read (a value outside an enum, a list where a
 * string belongs: what an API server without the CRD's schema lets through) must
 * not fail the watch, which would stop the agent for every allocation. The
 * agent's client reads each Allocation through this module: one that does not
 * convert becomes an Allocation with only its metadata and node name, carrying
 * the reason in an in-memory annotation, and the controller reports it
 * {@code Failed} naming the field.
 *
 * <p>Nesting is bounded the same way. A real API server stores a task
 * {@code config} up to some 10 000 levels deep, past Jackson's default limit of
 * 1 000 for the whole list or watch event, which then failed outside this
 * module and stopped the watch. The agent's parser takes what an API server
 * stores, and an allocation deeper than {@link #MAX_DEPTH} levels is read
 * without its deep part and reported unreadable, naming where.
 */
public final class UnreadableAllocations {

    /** Set only on objects in the agent's memory; never written to the API server. */
    static final String ANNOTATION = "drover.dev/unreadable";
    /** Levels below an Allocation's root it may nest; {@code spec.tasks[0].config} itself is 4 down. */
    static final int MAX_DEPTH = 100;
    /** What the parser of lists and watch events takes: more than the 10 000 levels an API server stores. */
    private static final StreamReadConstraints PARSER_LIMITS = StreamReadConstraints.builder()
            .maxNestingDepth(20_000)
            .maxNameLength(16 << 20)
            .build();

    private UnreadableAllocations() {}

    /** The client serialization the agent uses. */
    public static KubernetesSerialization serialization() {
        JsonFactory factory =
                Jackson.factory().rebuild().streamReadConstraints(PARSER_LIMITS).build();
        ObjectMapper mapper = Jackson.mapper(factory);
        mapper.registerModule(new SimpleModule("drover-unreadable-allocations")
                .addDeserializer(Allocation.class, new Deserializer()));
        KubernetesSerialization serialization = new JsonText(mapper);
        // a watch event's object is read by its kind: registered, an allocation is read as one (through the
        // module) instead of as a generic resource that the watch then converts, reading it a second time
        serialization.registerKubernetesResource(Allocation.class);
        return serialization;
    }

    /**
     * Reads a JSON text (each watch event's, which fabric8 hands over as a string) from its characters. fabric8
     * encodes the string to UTF-8 bytes and reads them through an 8 KB buffered stream to tell JSON from YAML: some
     * 39 KB allocated for a watch event of an allocation under 1 KB. A text that does not begin as JSON (YAML) is
     * read as fabric8 reads it.
     */
    private static final class JsonText extends KubernetesSerialization {

        private final ObjectMapper mapper;

        JsonText(ObjectMapper mapper) {
            super(mapper, true);
            this.mapper = mapper;
        }

        @Override
        public <T> T unmarshal(String text, Class<T> type) {
            if (!looksLikeJson(text)) {
                return super.unmarshal(text, type);
            }
            try {
                return mapper.readValue(text, type);
            } catch (IOException e) {
                throw KubernetesClientException.launderThrowable(e);
            }
        }

        /** Whether the first character that is not white space opens an object or an array, as fabric8 tells. */
        private static boolean looksLikeJson(String text) {
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                if (!Character.isWhitespace(c)) {
                    return c == '{' || c == '[';
                }
            }
            return false;
        }
    }

    /** Why {@code a} could not be read, as a violation naming the field; empty for a readable one. */
    static Optional<Violation> problem(Allocation a) {
        Map<String, String> annotations =
                a.getMetadata() == null ? null : a.getMetadata().getAnnotations();
        String why = annotations == null ? null : annotations.get(ANNOTATION);
        if (why == null) {
            return Optional.empty();
        }
        int colon = why.indexOf('\t');
        return Optional.of(
                colon < 0
                        ? new Violation("spec", why)
                        : new Violation(why.substring(0, colon), why.substring(colon + 1)));
    }

    private static final class Deserializer extends StdDeserializer<Allocation> {

        private static final ObjectMapper STRICT_MAPPER = Jackson.mapper();
        private static final KubernetesSerialization STRICT = new KubernetesSerialization(STRICT_MAPPER, true);
        private static final ObjectReader STRICT_READER = STRICT_MAPPER.readerFor(Allocation.class);

        Deserializer() {
            super(Allocation.class);
        }

        @Override
        public Allocation deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            // one pass over the text into tokens; the model reads the tokens, and only a refusal builds a tree
            TokenBuffer tokens = ctxt.bufferForInputBuffering(p);
            String tooDeep = copyBounded(p, tokens);
            if (tooDeep != null) {
                return unreadable(
                        tokens,
                        p,
                        tooDeep + "\tis nested more than " + MAX_DEPTH + " levels deep, more than the agent reads");
            }
            try (JsonParser again = tokens.asParser(p.getCodec())) {
                return STRICT_READER.readValue(again);
            } catch (JsonMappingException e) {
                return unreadable(tokens, p, describe(e));
            }
        }

        /**
         * Copies the value at {@code p} into {@code tokens}, each part deeper than {@link #MAX_DEPTH} replaced by
         * null (and skipped without building anything); returns where the first such part was, or null.
         */
        private static String copyBounded(JsonParser p, TokenBuffer tokens) throws IOException {
            JsonToken t = p.currentToken();
            JsonStreamContext root = null;
            String tooDeep = null;
            int depth = 0;
            while (true) {
                if (t == null) {
                    throw new JsonParseException(p, "the allocation ends early");
                }
                if (t.isStructStart() && depth == MAX_DEPTH) {
                    if (tooDeep == null) {
                        tooDeep = path(p.getParsingContext().getParent(), root);
                    }
                    p.skipChildren(); // iterates: no recursion, whatever the depth
                    tokens.writeNull();
                } else {
                    if (t.isStructStart()) {
                        depth++;
                        root = root == null ? p.getParsingContext() : root;
                    } else if (t.isStructEnd()) {
                        depth--;
                    }
                    tokens.copyCurrentEvent(p);
                }
                if (depth == 0) {
                    return tooDeep;
                }
                t = p.nextToken();
            }
        }

        /** "spec.tasks[0].config.a.a.a.a..." from the allocation's root down to {@code at}, the first few steps. */
        private static String path(JsonStreamContext at, JsonStreamContext root) {
            java.util.ArrayDeque<String> steps = new java.util.ArrayDeque<>();
            for (JsonStreamContext c = at; c != null; c = c.getParent()) {
                steps.push(
                        c.inArray()
                                ? "[" + c.getCurrentIndex() + "]"
                                : "." + UserText.bare(String.valueOf(c.getCurrentName())));
                if (c == root) {
                    break;
                }
            }
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < 8 && !steps.isEmpty(); i++) {
                out.append(steps.pop());
            }
            return (out.charAt(0) == '.' ? out.substring(1) : out) + (steps.isEmpty() ? "" : "...");
        }

        /** The allocation with only its metadata and node name, carrying {@code why} in {@link #ANNOTATION}. */
        private static Allocation unreadable(TokenBuffer tokens, JsonParser p, String why) throws IOException {
            JsonNode tree;
            try (JsonParser forTree = tokens.asParser(p.getCodec())) {
                tree = STRICT_MAPPER.readTree(forTree);
            }
            Allocation a = new Allocation();
            ObjectMeta meta = STRICT.convertValue(tree.path("metadata"), ObjectMeta.class);
            Map<String, String> annotations =
                    new HashMap<>(meta.getAnnotations() == null ? Map.of() : meta.getAnnotations());
            annotations.put(ANNOTATION, why);
            meta.setAnnotations(annotations);
            a.setMetadata(meta);
            AllocationSpec spec = new AllocationSpec();
            JsonNode node = tree.path("spec").path("nodeName");
            spec.setNodeName(node.isTextual() ? node.asText() : null);
            a.setSpec(spec);
            return a;
        }

        /** "spec.tasks[0].lifecycle.hook\t<what Jackson said, without its location>". */
        private static String describe(JsonMappingException jme) {
            StringBuilder path = new StringBuilder();
            for (JsonMappingException.Reference r : jme.getPath()) {
                if (r.getFieldName() != null) {
                    path.append(path.isEmpty() ? "" : ".").append(r.getFieldName());
                } else if (r.getIndex() >= 0) {
                    path.append('[').append(r.getIndex()).append(']');
                }
            }
            return (path.isEmpty() ? "spec" : UserText.cut(path.toString(), 1000)) + "\tcannot be read: "
                    + UserText.cut(jme.getOriginalMessage(), 1000);
        }
    }
}
