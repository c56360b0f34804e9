package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A set of field paths, as server-side apply tracks who owns what: a tree whose edges are path elements in the
 * {@code fieldsV1} notation ({@code f:spec}, {@code k:{"name":"web"}}) and whose nodes say whether that path itself
 * is a member ({@code .} in {@code fieldsV1}). Values are immutable; every operation returns a new set.
 */
final class FieldSet {

    private static final ObjectMapper JSON = NestingDepth.mapper();
    static final FieldSet EMPTY = new FieldSet(false, Map.of());

    /** The most path elements a set read from {@code fieldsV1} may hold: stored objects are bounded, so are these. */
    static final int MAX_ELEMENTS = 100_000;

    private final boolean member;
    private final Map<String, FieldSet> children;

    private FieldSet(boolean member, Map<String, FieldSet> children) {
        this.member = member;
        this.children = children;
    }

    /** A set under construction, built in place (a walk over a large object adds one path at a time). */
    static final class Builder {
        private boolean member;
        private final Map<String, Builder> children = new LinkedHashMap<>();

        Builder child(String element) {
            return children.computeIfAbsent(element, k -> new Builder());
        }

        void mark() {
            member = true;
        }

        FieldSet build() {
            Map<String, FieldSet> out = new LinkedHashMap<>();
            children.forEach((k, v) -> {
                FieldSet c = v.build();
                if (!c.isEmpty()) {
                    out.put(k, c);
                }
            });
            return out.isEmpty() && !member ? EMPTY : new FieldSet(member, out);
        }
    }

    /** This set without {@code element} and everything below it. */
    FieldSet without(String element) {
        Map<String, FieldSet> out = new LinkedHashMap<>(children);
        out.remove(element);
        return new FieldSet(member, out);
    }

    /** Only {@code element} and everything below it. */
    FieldSet only(String element) {
        FieldSet c = children.get(element);
        return c == null ? EMPTY : new FieldSet(false, Map.of(element, c));
    }

    /** The set holding only the path {@code elements}. */
    static FieldSet of(List<String> elements) {
        FieldSet s = new FieldSet(true, Map.of());
        for (int i = elements.size() - 1; i >= 0; i--) {
            s = new FieldSet(false, Map.of(elements.get(i), s));
        }
        return s;
    }

    boolean isEmpty() {
        return !member && children.isEmpty();
    }

    /** Whether the path {@code elements} is a member. */
    boolean contains(List<String> elements) {
        FieldSet s = this;
        for (String e : elements) {
            s = s.children.get(e);
            if (s == null) {
                return false;
            }
        }
        return s.member;
    }

    /** Whether a member lies strictly below {@code elements}. */
    boolean hasMemberBelow(List<String> elements) {
        FieldSet s = this;
        for (String e : elements) {
            s = s.children.get(e);
            if (s == null) {
                return false;
            }
        }
        return s.children.values().stream().anyMatch(c -> !c.isEmpty());
    }

    FieldSet union(FieldSet other) {
        Map<String, FieldSet> out = new LinkedHashMap<>(children);
        other.children.forEach((k, v) -> out.merge(k, v, FieldSet::union));
        return new FieldSet(member || other.member, out);
    }

    FieldSet difference(FieldSet other) {
        Map<String, FieldSet> out = new LinkedHashMap<>();
        children.forEach((k, v) -> {
            FieldSet o = other.children.get(k);
            FieldSet d = o == null ? v : v.difference(o);
            if (!d.isEmpty()) {
                out.put(k, d);
            }
        });
        return new FieldSet(member && !other.member, out);
    }

    FieldSet intersection(FieldSet other) {
        Map<String, FieldSet> out = new LinkedHashMap<>();
        children.forEach((k, v) -> {
            FieldSet o = other.children.get(k);
            if (o != null) {
                FieldSet i = v.intersection(o);
                if (!i.isEmpty()) {
                    out.put(k, i);
                }
            }
        });
        return new FieldSet(member && other.member, out);
    }

    /** The members, each as its list of path elements, parents before children. */
    List<List<String>> paths() {
        List<List<String>> out = new ArrayList<>();
        collect(new ArrayList<>(), out);
        return out;
    }

    private void collect(List<String> at, List<List<String>> out) {
        if (member) {
            out.add(List.copyOf(at));
        }
        children.forEach((k, v) -> {
            at.add(k);
            v.collect(at, out);
            at.removeLast();
        });
    }

    /** The set as {@code fieldsV1}: each member without children is {@code {}}, one with children has {@code .}. */
    ObjectNode toFieldsV1() {
        ObjectNode out = JSON.createObjectNode();
        if (member && !children.isEmpty()) {
            out.putObject(".");
        }
        children.forEach((k, v) -> out.set(k, v.toFieldsV1()));
        return out;
    }

    /** The set a {@code fieldsV1} object describes; a malformed one is refused, a huge one too. */
    static FieldSet fromFieldsV1(JsonNode fields) {
        int[] budget = {MAX_ELEMENTS};
        return read(fields, budget, true);
    }

    private static FieldSet read(JsonNode fields, int[] budget, boolean root) {
        if (!fields.isObject()) {
            throw new IllegalArgumentException("fieldsV1 must be made of objects");
        }
        Map<String, FieldSet> children = new LinkedHashMap<>();
        boolean member = !root && fields.isEmpty();
        for (Map.Entry<String, JsonNode> f : fields.properties()) {
            if (--budget[0] < 0) {
                throw new IllegalArgumentException("fieldsV1 has more than " + MAX_ELEMENTS + " elements");
            }
            if (f.getKey().equals(".")) {
                member = true;
            } else if (f.getKey().length() > 2 && f.getKey().charAt(1) == ':') {
                children.put(f.getKey(), read(f.getValue(), budget, false));
            } else {
                throw new IllegalArgumentException(
                        "fieldsV1 has an element that is not f:, k:, v: or i:: " + f.getKey());
            }
        }
        return new FieldSet(member, children);
    }

    /** {@code elements} as the API server writes a path in messages: {@code .spec.tasks[name="web"].config}. */
    static String pathText(List<String> elements) {
        StringBuilder out = new StringBuilder();
        for (String e : elements) {
            String rest = e.substring(2);
            switch (e.charAt(0)) {
                case 'f' -> out.append('.').append(rest);
                case 'k' -> {
                    out.append('[');
                    boolean first = true;
                    try {
                        for (Map.Entry<String, JsonNode> k : JSON.readTree(rest).properties()) {
                            out.append(first ? "" : ",")
                                    .append(k.getKey())
                                    .append('=')
                                    .append(k.getValue());
                            first = false;
                        }
                    } catch (java.io.IOException | RuntimeException bad) {
                        out.append(rest);
                    }
                    out.append(']');
                }
                case 'v' -> out.append("[=").append(rest).append(']');
                default -> out.append('[').append(rest).append(']');
            }
        }
        return out.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FieldSet s && member == s.member && children.equals(s.children);
    }

    @Override
    public int hashCode() {
        return Boolean.hashCode(member) * 31 + children.hashCode();
    }

    @Override
    public String toString() {
        return toFieldsV1().toString();
    }
}
