package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.IdentityHashMap;
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

    private static final ObjectMapper JSON = NestingDepth.mapper();

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

    /** 0 for an object, 1 for a list, 2 for a scalar (null included). */
    private static int shape(JsonNode value) {
        return value.isObject() ? 0 : value.isArray() ? 1 : 2;
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
        if (before != null && shape(before) != shape(after)) {
            // a scalar that became an object (or the reverse, or a list) changed the field itself, not only what
            // is now below it: its owner must see the conflict
            at.mark();
        }
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
                Map<String, Integer> index =
                        before instanceof ArrayNode list ? index(list, keys) : Map.of(); // once: linear, not n²
                for (JsonNode item : after) {
                    String e = keyElement(item, keys);
                    if (e == null) {
                        if (before == null || !before.equals(after)) {
                            at.mark();
                        }
                        return;
                    }
                    Integer i = index.get(e);
                    JsonNode was = i == null ? null : before.get(i);
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
            Map<String, Integer> index = index(out, keys); // once: a lookup per item keeps the merge linear
            for (JsonNode item : config) {
                String e = keyElement(item, keys);
                Integer at = e == null ? null : index.get(e);
                if (at == null) {
                    if (e != null) {
                        index.put(e, out.size());
                    }
                    out.add(item.deepCopy());
                } else {
                    out.set(at, merge(out.get(at), item, items(schema)));
                }
            }
            return out;
        }
        return config.deepCopy();
    }

    /** Where each key element first appears in the list map {@code list}; items without a whole key are left out. */
    private static Map<String, Integer> index(ArrayNode list, List<String> keys) {
        Map<String, Integer> out = new HashMap<>();
        for (int i = 0; i < list.size(); i++) {
            String e = keyElement(list.get(i), keys);
            if (e != null) {
                out.putIfAbsent(e, i);
            }
        }
        return out;
    }

    /** The index of the item of {@code list} whose key element is {@code element}, or null; lists indexed once. */
    private static Integer indexOf(ArrayNode list, String element, Map<JsonNode, Map<String, Integer>> indexes) {
        return indexes.computeIfAbsent(list, l -> index(list, keysOf(element))).get(element);
    }

    private static List<String> keysOf(String element) {
        try {
            List<String> keys = new ArrayList<>();
            ((ObjectNode) JSON.readTree(element.substring(2))).fieldNames().forEachRemaining(keys::add);
            return keys;
        } catch (IOException | ClassCastException e) {
            return List.of();
        }
    }

    /** The value at {@code path} in {@code object}, or null. */
    static JsonNode at(JsonNode object, List<String> path) {
        return at(object, path, new IdentityHashMap<>());
    }

    private static JsonNode at(JsonNode object, List<String> path, Map<JsonNode, Map<String, Integer>> indexes) {
        JsonNode n = object;
        for (String e : path) {
            if (n == null) {
                return null;
            }
            if (e.startsWith("f:")) {
                n = n.isObject() ? n.get(e.substring(2)) : null;
            } else {
                Integer i = n instanceof ArrayNode list ? indexOf(list, e, indexes) : null;
                n = i == null ? null : n.get(i);
            }
        }
        return n;
    }

    /**
     * Removes the values at {@code paths} from {@code object}; nothing for one that is not there. Each list is
     * indexed once and its items removed together at the end, so removing many items stays linear.
     */
    static void removeAll(JsonNode object, List<List<String>> paths) {
        Map<JsonNode, Map<String, Integer>> indexes = new IdentityHashMap<>();
        Map<ArrayNode, BitSet> gone = new IdentityHashMap<>();
        for (List<String> path : paths) {
            if (path.isEmpty()) {
                continue;
            }
            JsonNode parent = at(object, path.subList(0, path.size() - 1), indexes);
            String last = path.getLast();
            if (last.startsWith("f:") && parent instanceof ObjectNode o) {
                o.remove(last.substring(2));
            } else if (last.startsWith("k:") && parent instanceof ArrayNode a) {
                Integer i = indexOf(a, last, indexes);
                if (i != null) {
                    gone.computeIfAbsent(a, x -> new BitSet()).set(i);
                }
            }
        }
        gone.forEach((list, items) -> {
            List<JsonNode> kept = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
                if (!items.get(i)) {
                    kept.add(list.get(i));
                }
            }
            list.removeAll();
            list.addAll(kept);
        });
    }
}
