package dev.drover.controller;

import com.fasterxml.jackson.core.JsonParser;
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
import dev.drover.state.Jackson;
import io.fabric8.kubernetes.api.model.ObjectMeta;
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
 */
public final class UnreadableAllocations {

    /** Set only on objects in the agent's memory; never written to the API server. */
    static final String ANNOTATION = "drover.dev/unreadable";

    private UnreadableAllocations() {
    }

    /** The client serialization the agent uses. */
    public static KubernetesSerialization serialization() {
        ObjectMapper mapper = new ObjectMapper(Jackson.factory());
        mapper.registerModule(new SimpleModule("drover-unreadable-allocations")
                .addDeserializer(Allocation.class, new Deserializer()));
        return new KubernetesSerialization(mapper, true);
    }

    /** Why {@code a} could not be read, as a violation naming the field; empty for a readable one. */
    static Optional<Violation> problem(Allocation a) {
        Map<String, String> annotations = a.getMetadata() == null ? null : a.getMetadata().getAnnotations();
        String why = annotations == null ? null : annotations.get(ANNOTATION);
        if (why == null) {
            return Optional.empty();
        }
        int colon = why.indexOf('\t');
        return Optional.of(colon < 0 ? new Violation("spec", why)
                : new Violation(why.substring(0, colon), why.substring(colon + 1)));
    }

    private static final class Deserializer extends StdDeserializer<Allocation> {

        private static final ObjectMapper STRICT_MAPPER = new ObjectMapper(Jackson.factory());
        private static final KubernetesSerialization STRICT = new KubernetesSerialization(STRICT_MAPPER, true);
        private static final ObjectReader STRICT_READER = STRICT_MAPPER.readerFor(Allocation.class);

        Deserializer() {
            super(Allocation.class);
        }

        @Override
        public Allocation deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            // one pass over the text into tokens; the model reads the tokens, and only a refusal builds a tree
            TokenBuffer tokens = ctxt.bufferAsCopyOfValue(p);
            try (JsonParser again = tokens.asParser(p.getCodec())) {
                return STRICT_READER.readValue(again);
            } catch (JsonMappingException e) {
                JsonNode tree;
                try (JsonParser forTree = tokens.asParser(p.getCodec())) {
                    tree = STRICT_MAPPER.readTree(forTree);
                }
                Allocation a = new Allocation();
                ObjectMeta meta = STRICT.convertValue(tree.path("metadata"), ObjectMeta.class);
                Map<String, String> annotations = new HashMap<>(meta.getAnnotations() == null ? Map.of()
                        : meta.getAnnotations());
                annotations.put(ANNOTATION, describe(e));
                meta.setAnnotations(annotations);
                a.setMetadata(meta);
                AllocationSpec spec = new AllocationSpec();
                JsonNode node = tree.path("spec").path("nodeName");
                spec.setNodeName(node.isTextual() ? node.asText() : null);
                a.setSpec(spec);
                return a;
            }
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
            return (path.isEmpty() ? "spec" : path) + "\tcannot be read: " + jme.getOriginalMessage();
        }
    }
}
