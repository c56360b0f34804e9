package dev.drover.node;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.kube.NodeView;
import dev.drover.state.Jackson;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * How a Node read from the API server differs from the {@code drover.dev/} fields the agent wants on it: keys
 * whose value changed, keys that are missing, and {@code drover.dev/} keys the agent does not set (foreign: to be
 * removed). Keys without the {@code drover.dev/} prefix are never looked at. A pure value: no I/O.
 *
 * @param wanted      what the agent wants on the Node
 * @param differences each key that is not as wanted, in a stable order
 */
record NodeDrift(NodeFields wanted, List<Difference> differences) {

    private static final ObjectMapper JSON = Jackson.mapper();
    /** The most differences one log line names; the rest are counted. */
    static final int LOGGED = 16;
    /** The most characters of a found value (someone else's text) one log line shows. */
    static final int SHOWN = 64;

    /** A map of the Node that carries the agent's keys. */
    enum Field {
        LABEL("label"),
        ANNOTATION("annotation"),
        CAPACITY("capacity"),
        ALLOCATABLE("allocatable");

        final String word;

        Field(String word) {
            this.word = word;
        }
    }

    /**
     * One key not as wanted.
     *
     * @param found   its value on the Node; null when it is missing there
     * @param foreign a {@code drover.dev/} key the agent does not set: removed rather than set back
     */
    record Difference(Field field, String key, String found, boolean foreign) {}

    NodeDrift {
        differences = List.copyOf(differences);
    }

    /** Compares {@code node} (as read from the API server) with {@code wanted}. */
    static NodeDrift between(NodeView node, NodeFields wanted) {
        List<Difference> out = new ArrayList<>();
        compare(Field.LABEL, node.labels(), wanted.labels(), Function.identity(), out);
        compare(Field.ANNOTATION, node.annotations(), wanted.annotations(), Function.identity(), out);
        compare(Field.CAPACITY, node.capacity(), wanted.capacity(), NodeDrift::amount, out);
        compare(Field.ALLOCATABLE, node.allocatable(), wanted.allocatable(), NodeDrift::amount, out);
        return new NodeDrift(wanted, out);
    }

    private static <V> void compare(
            Field field,
            Map<String, V> found,
            Map<String, String> wanted,
            Function<V, String> text,
            List<Difference> out) {
        Map<String, V> present = found == null ? Map.of() : found;
        wanted.forEach((key, value) -> {
            V there = present.get(key);
            String shown = there == null ? null : text.apply(there);
            if (shown == null || !same(field, value, shown)) {
                out.add(new Difference(field, key, shown, false));
            }
        });
        present.keySet().stream()
                .filter(key -> key.startsWith(NodeFields.PREFIX) && !wanted.containsKey(key))
                .sorted()
                .forEach(key -> out.add(new Difference(
                        field, key, present.get(key) == null ? "" : text.apply(present.get(key)), true)));
    }

    /** A quantity as the server wrote it ("2", "2k"); the comparison reads it as a number. */
    private static String amount(Quantity q) {
        return q.getAmount() + (q.getFormat() == null ? "" : q.getFormat());
    }

    private static boolean same(Field field, String wanted, String found) {
        if (field == Field.LABEL || field == Field.ANNOTATION) {
            return wanted.equals(found);
        }
        try { // the server may write a quantity in another form: 1000 as 1k
            BigDecimal a = new Quantity(wanted).getNumericalAmount();
            BigDecimal b = new Quantity(found).getNumericalAmount();
            return a.compareTo(b) == 0;
        } catch (RuntimeException notAQuantity) {
            return false;
        }
    }

    /** Whether the Node is as wanted. */
    boolean none() {
        return differences.isEmpty();
    }

    /**
     * The merge patch of {@code nodes/status} that makes the Node as wanted: every wanted field, and null (removal)
     * for each foreign key. A map with nothing to write is left out.
     */
    String patch() {
        ObjectNode patch = JSON.createObjectNode();
        ObjectNode metadata = JSON.createObjectNode();
        ObjectNode status = JSON.createObjectNode();
        put(metadata, "labels", Field.LABEL, wanted.labels());
        put(metadata, "annotations", Field.ANNOTATION, wanted.annotations());
        put(status, "capacity", Field.CAPACITY, wanted.capacity());
        put(status, "allocatable", Field.ALLOCATABLE, wanted.allocatable());
        if (!metadata.isEmpty()) {
            patch.set("metadata", metadata);
        }
        if (!status.isEmpty()) {
            patch.set("status", status);
        }
        return patch.toString();
    }

    private void put(ObjectNode parent, String name, Field field, Map<String, String> values) {
        ObjectNode map = JSON.createObjectNode();
        values.forEach(map::put);
        differences.stream().filter(d -> d.field() == field && d.foreign()).forEach(d -> map.putNull(d.key()));
        if (!map.isEmpty()) {
            parent.set(name, map);
        }
    }

    /**
     * The differences for a log line: which key, what was found (escaped and cut: someone else's text) and what is
     * done; at most {@link #LOGGED}, then how many more.
     */
    String describe() {
        List<String> parts = new ArrayList<>();
        for (Difference d : differences.subList(0, Math.min(LOGGED, differences.size()))) {
            String found = d.found() == null ? "missing" : "was " + quoted(d.found());
            parts.add(d.field().word + " " + quoted(d.key()) + " " + found + (d.foreign() ? ", removed" : ", written"));
        }
        if (differences.size() > LOGGED) {
            parts.add("and " + (differences.size() - LOGGED) + " more");
        }
        return String.join("; ", parts);
    }

    /** {@code text} in double quotes, its quotes, backslashes and non-printable characters escaped, cut to {@link #SHOWN}. */
    static String quoted(String text) {
        StringBuilder out = new StringBuilder("\"");
        int shown = 0;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (shown++ == SHOWN) {
                return out.append("\"… (")
                        .append(text.length())
                        .append(" chars)")
                        .toString();
            }
            if (cp == '"' || cp == '\\') {
                out.append('\\').appendCodePoint(cp);
            } else if (cp < 0x20 || cp > 0x7e) {
                out.append(cp > 0xffff ? String.format("\\U%08x", cp) : String.format("\\u%04x", cp));
            } else {
                out.appendCodePoint(cp);
            }
        }
        return out.append('"').toString();
    }
}
