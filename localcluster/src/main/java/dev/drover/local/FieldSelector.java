package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * An equality field selector ({@code spec.nodeName=a,involvedObject.name!=b}),
 * evaluated on the JSON of an object. The server applies it itself, for any
 * field, so lists and watches of any resource can be filtered.
 */
record FieldSelector(List<Term> terms) {

    record Term(String path, String value, boolean equal) {}

    static FieldSelector parse(String raw) {
        List<Term> terms = new ArrayList<>();
        if (raw == null || raw.isBlank()) {
            return new FieldSelector(terms);
        }
        for (String part : URLDecoder.decode(raw, StandardCharsets.UTF_8).split(",")) {
            int ne = part.indexOf("!=");
            int eq = part.indexOf('=');
            if (ne >= 0) {
                terms.add(new Term(
                        part.substring(0, ne).trim(), part.substring(ne + 2).trim(), false));
            } else if (eq >= 0) {
                String value = part.substring(eq + 1).replaceFirst("^=", "").trim();
                terms.add(new Term(part.substring(0, eq).trim(), value, true));
            } else {
                throw new IllegalArgumentException(
                        "invalid field selector term \"" + part + "\": use field=value or field!=value");
            }
        }
        return new FieldSelector(terms);
    }

    boolean isEmpty() {
        return terms.isEmpty();
    }

    boolean matches(JsonNode object) {
        for (Term t : terms) {
            boolean same = Json.text(Json.at(object, t.path())).equals(t.value());
            if (same != t.equal()) {
                return false;
            }
        }
        return true;
    }
}
