package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An object's fields as server-side apply sees them through a CRD's structural schema: which paths it sets
 * ({@link #setOf}), which a change added or modified ({@link #changed}), how an applied configuration merges into it
 * ({@link #merge}). Objects with declared properties merge field by field and so do maps; a list with
 * {@code x-kubernetes-list-type: map} merges item by item by its keys; every other list, a map marked atomic and a
 * scalar is one value, owned and replaced whole. Where no schema speaks (built-ins, preserved unknown fields) maps
 * are granular and lists atomic, as the API server deduces them.
 */
final class TypedFields {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Metadata the server owns, never tracked; as the API server strips them from managed fields. */
    private static final List<String> SERVER_METADATA = List.of(
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "selfLink");

    /** The metadata fields tracked, with the shapes ObjectMeta gives them (finalizers and owners kept whole here). */
    private static final JsonNode METADATA = parse("""
            {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
              "labels": {"type": "object", "additionalProperties": {"type": "string"}},
              "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
              "finalizers": {"type": "array", "items": {"type": "string"}},
              "ownerReferences": {"type": "array", "items": {"type": "object"}}}}""");

    private enum Kind {
        STRUCT,
        MAP,
        LIST_MAP,
        ATOMIC
    }

    private final JsonNode root;

    /** Fields of objects of the type whose schema is {@code schema} (null: a built-in, every field deduced). */
    TypedFields(JsonNode schema) {
        ObjectNode r = schema == null
                ? JSON.createObjectNode().put("type", "object").put("x-kubernetes-preserve-unknown-fields", true)
                : schema.deepCopy();
        r.withObjectProperty("properties").set("metadata", METADATA);
        this.root = r;
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code object} without what is never tracked: apiVersion, kind and the server's metadata. */
    static ObjectNode trackable(JsonNode object) {
        ObjectNode out = object.isObject() ? ((ObjectNode) object).deepCopy() : JSON.createObjectNode();
        out.remove(List.of("apiVersion", "kind"));
        if (out.get("metadata") instanceof ObjectNode meta) {
            meta.remove(SERVER_METADATA);
            if (meta.isEmpty()) {
                out.remove("metadata");
            }
        }
        return out;
    }

    /** The paths {@code object} sets. */
    FieldSet setOf(JsonNode object) {
        FieldSet.Builder b = new FieldSet.Builder();
        walkSet(trackable(object), root, b);
        return b.build();
    }

    /** The paths of {@code after} that {@code before} (null: nothing) did not have or had with another value. */
    FieldSet changed(JsonNode before, JsonNode after) {
        FieldSet.Builder b = new FieldSet.Builder();
        walkChanged(before == null ? null : trackable(before), trackable(after), root, b);
        return b.build();
    }

    /** {@code config} merged into {@code live}: structs and maps field by field, list maps item by item by key. */
    JsonNode merge(JsonNode live, JsonNode config) {
        return merge(live, config, root);
    }

    private static Kind kind(JsonNode schema, JsonNode value) {
        if (value.isObject()) {
            if (schema == null) {
                return Kind.MAP;
            }
            if ("atomic".equals(schema.path("x-kubernetes-map-type").asText())
                    || (schema.has("type")
                            && !"object".equals(schema.path("type").asText()))) {
                return Kind.ATOMIC;
            }
            return schema.path("properties").isEmpty() ? Kind.MAP : Kind.STRUCT;
        }
        if (value.isArray() && schema != null && ListTypes.of(schema).equals("map")) {
            return Kind.LIST_MAP;
        }
        return Kind.ATOMIC;
    }

    /** The schema of field {@code name} of an object of {@code schema}; null where none is declared (deduced). */
    private static JsonNode field(JsonNode schema, String name) {
        if (schema == null) {
            return null;
        }
        JsonNode declared = schema.path("properties").get(name);
        if (declared != null) {
            return declared;
        }
        JsonNode additional = schema.path("additionalProperties");
        return additional.isObject() ? additional : null;
    }

    private static boolean declared(JsonNode schema, String name) {
        return schema != null && schema.path("properties").has(name);
    }

    private static JsonNode items(JsonNode schema) {
        JsonNode items = schema.path("items");
        return items.isObject() ? items : null;
    }

    /** The path element of a list map's item, {@code k:{"name":"web"}}; null when a key is missing. */
    static String keyElement(JsonNode item, List<String> keys) {
        if (!item.isObject() || keys.isEmpty()) {
            return null;
        }
        Map<String, JsonNode> key = new TreeMap<>();
        for (String k : keys) {
            JsonNode v = item.get(k);
            if (v == null || v.isNull() || v.isContainerNode()) {
                return null;
            }
            key.put(k, v);
        }
        ObjectNode out = JSON.createObjectNode();
        key.forEach(out::set);
        return "k:" + out;
    }

    private void walkSet(JsonNode value, JsonNode schema, FieldSet.Builder at) {
        switch (kind(schema, value)) {
            case ATOMIC -> at.mark();
            case STRUCT, MAP ->
                value.properties().forEach(f -> {
                    FieldSet.Builder child = at.child("f:" + f.getKey());
                    JsonNode v = f.getValue();
                    walkSet(v, field(schema, f.getKey()), child);
                    if (v.isNull() || (v.isObject() && v.isEmpty()) || !declared(schema, f.getKey())) {
                        child.mark();
                    }
                });
            case LIST_MAP -> {
                List<String> keys = ListTypes.keys(schema);
                for (JsonNode item : value) {
                    String e = keyElement(item, keys);
                    if (e == null) {
                        at.mark(); // not a valid list map: owned whole (validation refuses it anyway)
                        return;
                    }
                    FieldSet.Builder child = at.child(e);
                    walkSet(item, items(schema), child);
                    child.mark();
                }
            }
        }
    }

    private void walkChanged(JsonNode before, JsonNode after, JsonNode schema, FieldSet.Builder at) {
        switch (kind(schema, after)) {
            case ATOMIC -> {
                if (before == null || !before.equals(after)) {
                    at.mark();
                }
            }
            case STRUCT, MAP ->
                after.properties().forEach(f -> {
                    JsonNode was = before == null || !before.isObject() ? null : before.get(f.getKey());
                    FieldSet.Builder child = at.child("f:" + f.getKey());
                    JsonNode v = f.getValue();
                    walkChanged(was, v, field(schema, f.getKey()), child);
                    boolean member = v.isNull() || (v.isObject() && v.isEmpty()) || !declared(schema, f.getKey());
                    if (member && (was == null || was.isNull() != v.isNull())) {
                        child.mark();
                    }
                });
            case LIST_MAP -> {
                List<String> keys = ListTypes.keys(schema);
                for (JsonNode item : after) {
                    String e = keyElement(item, keys);
                    if (e == null) {
                        if (before == null || !before.equals(after)) {
                            at.mark();
                        }
                        return;
                    }
                    JsonNode was = before == null ? null : find(before, e);
                    FieldSet.Builder child = at.child(e);
                    walkChanged(was, item, items(schema), child);
                    if (was == null) {
                        child.mark();
                    }
                }
            }
        }
    }

    private JsonNode merge(JsonNode live, JsonNode config, JsonNode schema) {
        Kind kind = kind(schema, config);
        if ((kind == Kind.STRUCT || kind == Kind.MAP) && live != null && live.isObject()) {
            ObjectNode out = ((ObjectNode) live).deepCopy();
            config.properties()
                    .forEach(f ->
                            out.set(f.getKey(), merge(live.get(f.getKey()), f.getValue(), field(schema, f.getKey()))));
            return out;
        }
        if (kind == Kind.LIST_MAP && live != null && live.isArray()) {
            List<String> keys = ListTypes.keys(schema);
            ArrayNode out = ((ArrayNode) live).deepCopy();
            for (JsonNode item : config) {
                String e = keyElement(item, keys);
                int at = e == null ? -1 : indexOf(out, e);
                if (at < 0) {
                    out.add(item.deepCopy());
                } else {
                    out.set(at, merge(out.get(at), item, items(schema)));
                }
            }
            return out;
        }
        return config.deepCopy();
    }

    /** The item of {@code list} whose key element is {@code element}, or null. */
    private static JsonNode find(JsonNode list, String element) {
        int i = list.isArray() ? indexOf((ArrayNode) list, element) : -1;
        return i < 0 ? null : list.get(i);
    }

    private static int indexOf(ArrayNode list, String element) {
        List<String> keys = keysOf(element);
        for (int i = 0; i < list.size(); i++) {
            if (element.equals(keyElement(list.get(i), keys))) {
                return i;
            }
        }
        return -1;
    }

    private static List<String> keysOf(String element) {
        try {
            List<String> keys = new java.util.ArrayList<>();
            ((ObjectNode) JSON.readTree(element.substring(2))).fieldNames().forEachRemaining(keys::add);
            return keys;
        } catch (IOException | ClassCastException e) {
            return List.of();
        }
    }

    /** The value at {@code path} in {@code object}, or null. */
    static JsonNode at(JsonNode object, List<String> path) {
        JsonNode n = object;
        for (String e : path) {
            if (n == null) {
                return null;
            }
            n = e.startsWith("f:") ? (n.isObject() ? n.get(e.substring(2)) : null) : find(n, e);
        }
        return n;
    }

    /** Removes the value at {@code path} from {@code object}; nothing when it is not there. */
    static void remove(JsonNode object, List<String> path) {
        if (path.isEmpty()) {
            return;
        }
        JsonNode parent = at(object, path.subList(0, path.size() - 1));
        String last = path.getLast();
        if (last.startsWith("f:") && parent instanceof ObjectNode o) {
            o.remove(last.substring(2));
        } else if (last.startsWith("k:") && parent instanceof ArrayNode a) {
            int i = indexOf(a, last);
            if (i >= 0) {
                a.remove(i);
            }
        }
    }
}
