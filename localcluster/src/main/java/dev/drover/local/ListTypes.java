package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.drover.common.UserText;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The uniqueness an {@code x-kubernetes-list-type} asks of a list, as the API server checks it: a {@code map} list's
 * items may not repeat their key ({@code x-kubernetes-list-map-keys}), a {@code set} list's values may not repeat.
 */
final class ListTypes {

    /** The most of a repeated key a message shows: a hostile key may be as long as the body. */
    static final int MAX_SHOWN = 256;

    private ListTypes() {}

    /** The list type {@code schema} declares: {@code map}, {@code set} or {@code atomic} (the default). */
    static String of(JsonNode schema) {
        return schema.path("x-kubernetes-list-type").asText("atomic");
    }

    /** The key fields of a {@code map} list's items. */
    static List<String> keys(JsonNode schema) {
        List<String> keys = new ArrayList<>();
        schema.path("x-kubernetes-list-map-keys").forEach(k -> keys.add(k.asText()));
        return keys;
    }

    /** The key of a map list's {@code item} as Go prints it in messages: {@code map[string]interface {}{"name":"web"}}. */
    static String keyText(JsonNode item, List<String> keys) {
        StringBuilder out = new StringBuilder("map[string]interface {}{");
        boolean first = true;
        for (String k : new TreeSet<>(keys)) {
            if (!item.has(k)) {
                continue;
            }
            out.append(first ? "" : ", ")
                    .append(Json.quote(k))
                    .append(':')
                    .append(item.get(k).toString());
            first = false;
        }
        return out.append('}').toString();
    }

    /** Adds to {@code out} one message per repeated key or value of {@code array}, naming the repeating item. */
    static void duplicates(ArrayNode array, JsonNode schema, String path, List<String> out) {
        String type = of(schema);
        if (!type.equals("map") && !type.equals("set")) {
            return;
        }
        List<String> keys = keys(schema);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < array.size(); i++) {
            JsonNode item = array.get(i);
            String key = type.equals("map") ? keyText(item, keys) : item.toString();
            if (!seen.add(key)) {
                out.add(path + "[" + i + "]: Duplicate value: " + UserText.cut(key, MAX_SHOWN));
            }
        }
    }
}
