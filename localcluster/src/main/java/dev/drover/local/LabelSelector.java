package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A label selector as {@code kubectl -l} and clients send it: {@code a=b},
 * {@code a==b}, {@code a!=b}, {@code a in (x,y)}, {@code a notin (x)},
 * {@code a} (has the label) and {@code !a} (has not), joined by commas.
 */
record LabelSelector(List<Requirement> requirements) {

    enum Op {
        EQUALS,
        NOT_EQUALS,
        IN,
        NOT_IN,
        EXISTS,
        NOT_EXISTS
    }

    record Requirement(String key, Op op, Set<String> values) {
        boolean matches(JsonNode labels) {
            JsonNode v = labels.get(key);
            String value = v == null || v.isNull() ? null : v.asText();
            return switch (op) {
                case EQUALS, IN -> value != null && values.contains(value);
                case NOT_EQUALS, NOT_IN -> value == null || !values.contains(value);
                case EXISTS -> value != null;
                case NOT_EXISTS -> value == null;
            };
        }
    }

    static LabelSelector parse(String raw) {
        List<Requirement> out = new ArrayList<>();
        if (raw == null || raw.isBlank()) {
            return new LabelSelector(out);
        }
        for (String term : split(raw)) {
            String t = term.trim();
            if (t.isEmpty()) {
                throw invalid(raw, "an empty requirement");
            }
            String[] set = t.split("\\s+(?=(in|notin)\\s*\\()", 2);
            if (set.length == 2) {
                String rest = set[1].trim();
                Op op = rest.startsWith("notin") ? Op.NOT_IN : Op.IN;
                int open = rest.indexOf('(');
                if (!rest.endsWith(")")) {
                    throw invalid(raw, "an unclosed value set in \"" + t + "\"");
                }
                Set<String> values = Set.copyOf(List.of(
                        rest.substring(open + 1, rest.length() - 1).trim().split("\\s*,\\s*")));
                out.add(new Requirement(key(raw, set[0]), op, values));
            } else if (t.contains("!=")) {
                int i = t.indexOf("!=");
                out.add(new Requirement(
                        key(raw, t.substring(0, i)),
                        Op.NOT_EQUALS,
                        Set.of(t.substring(i + 2).trim())));
            } else if (t.contains("=")) {
                int i = t.indexOf('=');
                String value = t.substring(i + 1).replaceFirst("^=", "").trim();
                out.add(new Requirement(key(raw, t.substring(0, i)), Op.EQUALS, Set.of(value)));
            } else if (t.startsWith("!")) {
                out.add(new Requirement(key(raw, t.substring(1)), Op.NOT_EXISTS, Set.of()));
            } else {
                out.add(new Requirement(key(raw, t), Op.EXISTS, Set.of()));
            }
        }
        return new LabelSelector(out);
    }

    boolean isEmpty() {
        return requirements.isEmpty();
    }

    boolean matches(JsonNode object) {
        JsonNode labels = object.path("metadata").path("labels");
        for (Requirement r : requirements) {
            if (!r.matches(labels)) {
                return false;
            }
        }
        return true;
    }

    /** Splits on the commas that are not inside a value set. */
    private static List<String> split(String raw) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                parts.add(raw.substring(start, i));
                start = i + 1;
            }
        }
        parts.add(raw.substring(start));
        return parts;
    }

    private static String key(String raw, String key) {
        String k = key.trim();
        if (k.isEmpty() || !k.matches("([a-z0-9A-Z.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")) {
            throw invalid(raw, "the key \"" + k + "\", which is not a label name");
        }
        return k;
    }

    private static IllegalArgumentException invalid(String raw, String what) {
        return new IllegalArgumentException("unable to parse requirement in label selector \"" + raw + "\": " + what);
    }
}
