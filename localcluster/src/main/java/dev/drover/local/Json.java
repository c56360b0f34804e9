package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** Small helpers over Jackson trees: dotted paths as field selectors and printer columns use them. */
final class Json {

    private Json() {}

    /** The value at a dotted path ({@code spec.nodeName}, leading dot allowed), or a missing node. */
    static JsonNode at(JsonNode root, String dotted) {
        JsonNode n = root;
        for (String part : dotted.replaceFirst("^\\.", "").split("\\.")) {
            if (part.isEmpty()) {
                continue;
            }
            n = n.path(part);
        }
        return n;
    }

    /** A value as a field selector or a table cell compares it: text as is, missing as empty. */
    static String text(JsonNode n) {
        if (n == null || n.isMissingNode() || n.isNull()) {
            return "";
        }
        return n.isValueNode() ? n.asText() : n.toString();
    }

    /** {@code s} as a quoted JSON string, the way the server's messages show a value. */
    static String quote(String s) {
        return com.fasterxml.jackson.databind.node.TextNode.valueOf(s).toString();
    }

    static ObjectNode metadata(JsonNode object) {
        return object.path("metadata") instanceof ObjectNode m ? m : null;
    }
}
