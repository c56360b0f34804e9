package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.re2j.Pattern;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Checks an object against a CRD's structural schema the way the API server
 * does: fields the schema does not declare (strict field validation), types,
 * enums, patterns, bounds, required fields and the keys of list-type map
 * lists; and fills in schema defaults.
 * CEL rules ({@code x-kubernetes-validations}) are not evaluated: Drover's
 * agent validates the same rules itself.
 */
final class SchemaValidator {

    /** Fields every object has, which CRD schemas leave out. */
    private static final Set<String> ROOT_FIELDS = Set.of("apiVersion", "kind", "metadata");
    /**
     * Schema patterns, compiled once. RE2, as the API server's Go regexp: linear in the value, no backtracking and
     * no recursion, so a megabyte value neither hangs nor overflows the stack (java.util.regex did both).
     */
    private static final Map<String, Pattern> PATTERNS = new ConcurrentHashMap<>();

    /** What a check found; each list keeps the first {@link Problems#SHOWN} and counts the rest. */
    record Result(Problems unknownFields, Problems invalid) {
        boolean ok() {
            return unknownFields.isEmpty() && invalid.isEmpty();
        }
    }

    /** At most this many compiled patterns are kept: the stored CRDs' patterns are few, a flood of CRDs is not. */
    private static final int PATTERNS_KEPT = 1024;

    private SchemaValidator() {}

    private static Pattern pattern(String regex) {
        if (PATTERNS.size() >= PATTERNS_KEPT) {
            PATTERNS.clear();
        }
        return PATTERNS.computeIfAbsent(regex, Pattern::compile);
    }

    static Result validate(JsonNode object, JsonNode schema, boolean checkRequired) {
        Problems unknown = new Problems();
        Problems invalid = new Problems();
        if (object instanceof ObjectNode root && schema != null) {
            JsonNode props = schema.path("properties");
            for (Map.Entry<String, JsonNode> f : root.properties()) {
                if (ROOT_FIELDS.contains(f.getKey())) {
                    continue;
                }
                if (!props.has(f.getKey())) {
                    if (!schema.path("x-kubernetes-preserve-unknown-fields").asBoolean(false)) {
                        unknown.add(f.getKey());
                    }
                    continue;
                }
                check(f.getValue(), props.get(f.getKey()), f.getKey(), checkRequired, unknown, invalid);
            }
        }
        return new Result(unknown, invalid);
    }

    /**
     * The lists and maps of {@code object} with more items than its schema's {@code maxItems} or
     * {@code maxProperties} allows, worded as {@link #validate} words them. A walk that stops at each, for work that
     * grows faster than the object (server-side apply's merge) to refuse it first.
     */
    static Problems tooMany(JsonNode object, JsonNode schema) {
        Problems out = new Problems();
        if (object instanceof ObjectNode root && schema != null) {
            for (Map.Entry<String, JsonNode> f : root.properties()) {
                JsonNode declared = schema.path("properties").get(f.getKey());
                if (!ROOT_FIELDS.contains(f.getKey()) && declared != null) {
                    tooMany(f.getValue(), declared, f.getKey(), out);
                }
            }
        }
        return out;
    }

    private static void tooMany(JsonNode value, JsonNode schema, String path, List<String> out) {
        String bound = value.isArray() ? "maxItems" : "maxProperties";
        if (value.isContainerNode()
                && schema.has(bound)
                && value.size() > schema.get(bound).asLong()) {
            out.add(tooMany(path, value.size(), schema.get(bound).asLong()));
            return;
        }
        if (value.isArray() && schema.path("items").isObject()) {
            for (int i = 0; i < value.size(); i++) {
                tooMany(value.get(i), schema.get("items"), path + "[" + i + "]", out);
            }
        } else if (value.isObject()) {
            for (Map.Entry<String, JsonNode> f : value.properties()) {
                JsonNode field = schema.path("properties").get(f.getKey());
                if (field == null && schema.path("additionalProperties").isObject()) {
                    field = schema.get("additionalProperties");
                }
                if (field != null) {
                    tooMany(f.getValue(), field, path + "." + f.getKey(), out);
                }
            }
        }
    }

    private static String tooMany(String path, int size, long most) {
        return path + ": Too many: " + size + ": must have at most " + most + " items";
    }

    private static void check(
            JsonNode value,
            JsonNode schema,
            String path,
            boolean checkRequired,
            List<String> unknown,
            List<String> invalid) {
        if (value.isNull()) {
            if (!schema.path("nullable").asBoolean(false)) {
                invalid.add(path + ": Invalid value: \"null\": " + path + " in body must be of type "
                        + schema.path("type").asText("object"));
            }
            return;
        }
        boolean preserve = schema.path("x-kubernetes-preserve-unknown-fields").asBoolean(false);
        String type = schema.path("type").asText("");
        if (!type.isEmpty() && !hasType(value, type)) {
            invalid.add(path + ": Invalid value: \"" + typeOf(value) + "\": " + path + " in body must be of type "
                    + type + ": \"" + typeOf(value) + "\"");
            return;
        }
        if (schema.has("enum")) {
            boolean found = false;
            List<String> allowed = new ArrayList<>();
            for (JsonNode e : schema.get("enum")) {
                allowed.add("\"" + e.asText() + "\"");
                found |= e.equals(value);
            }
            if (!found) {
                invalid.add(
                        path + ": Unsupported value: " + value + ": supported values: " + String.join(", ", allowed));
            }
        }
        if (value.isTextual()) {
            String s = value.asText();
            if (schema.has("pattern")
                    && !pattern(schema.get("pattern").asText()).matcher(s).find()) {
                invalid.add(path + ": Invalid value: " + value + ": " + path + " in body should match '"
                        + schema.get("pattern").asText() + "'");
            }
            if (schema.has("maxLength") && s.length() > schema.get("maxLength").asLong()) {
                invalid.add(path + ": Too long: may not be more than "
                        + schema.get("maxLength").asLong() + " bytes");
            }
            if (schema.has("minLength") && s.length() < schema.get("minLength").asLong()) {
                invalid.add(path + ": Invalid value: " + value + ": " + path + " in body should be at least "
                        + schema.get("minLength").asLong() + " chars long");
            }
        }
        if (value.isNumber()) {
            if (schema.has("minimum")
                    && value.asDouble() < schema.get("minimum").asDouble()) {
                invalid.add(path + ": Invalid value: " + value + ": " + path
                        + " in body should be greater than or equal to "
                        + schema.get("minimum").asLong());
            }
            if (schema.has("maximum")
                    && value.asDouble() > schema.get("maximum").asDouble()) {
                invalid.add(
                        path + ": Invalid value: " + value + ": " + path + " in body should be less than or equal to "
                                + schema.get("maximum").asLong());
            }
        }
        if (value instanceof ArrayNode array) {
            if (schema.has("maxItems") && array.size() > schema.get("maxItems").asLong()) {
                // as the API server: the items of a list too long are not looked at, nor their uniqueness
                invalid.add(tooMany(path, array.size(), schema.get("maxItems").asLong()));
                return;
            }
            if (schema.has("minItems") && array.size() < schema.get("minItems").asLong()) {
                invalid.add(path + ": Invalid value: " + array.size() + ": " + path + " in body should have at least "
                        + schema.get("minItems").asLong() + " items");
            }
            ListTypes.duplicates(array, schema, path, invalid);
            JsonNode items = schema.path("items");
            if (!items.isMissingNode()) {
                for (int i = 0; i < array.size(); i++) {
                    check(array.get(i), items, path + "[" + i + "]", checkRequired, unknown, invalid);
                }
            }
        }
        if (value instanceof ObjectNode object) {
            if (schema.has("maxProperties")
                    && object.size() > schema.get("maxProperties").asLong()) {
                invalid.add(
                        tooMany(path, object.size(), schema.get("maxProperties").asLong()));
            }
            JsonNode props = schema.path("properties");
            JsonNode additional = schema.path("additionalProperties");
            for (Map.Entry<String, JsonNode> f : object.properties()) {
                String child = path + "." + f.getKey();
                if (props.has(f.getKey())) {
                    check(f.getValue(), props.get(f.getKey()), child, checkRequired, unknown, invalid);
                } else if (additional.isObject()) {
                    check(f.getValue(), additional, child, checkRequired, unknown, invalid);
                } else if (!preserve && !additional.asBoolean(false)) {
                    unknown.add(child);
                }
            }
            if (checkRequired) {
                for (JsonNode r : schema.path("required")) {
                    if (!object.has(r.asText())) {
                        invalid.add(path + "." + r.asText() + ": Required value");
                    }
                }
            }
        }
    }

    /** Fills in schema defaults for absent fields, recursively through the objects present. */
    static void applyDefaults(JsonNode value, JsonNode schema) {
        if (schema == null) {
            return;
        }
        if (value instanceof ObjectNode object) {
            JsonNode props = schema.path("properties");
            for (Map.Entry<String, JsonNode> p : props.properties()) {
                if (!object.has(p.getKey()) && p.getValue().has("default")) {
                    object.set(p.getKey(), p.getValue().get("default").deepCopy());
                }
                if (object.has(p.getKey())) {
                    applyDefaults(object.get(p.getKey()), p.getValue());
                }
            }
        } else if (value instanceof ArrayNode array && schema.has("items")) {
            array.forEach(item -> applyDefaults(item, schema.get("items")));
        }
    }

    private static boolean hasType(JsonNode v, String type) {
        return switch (type) {
            case "string" -> v.isTextual();
            case "integer" -> v.isIntegralNumber() || (v.isNumber() && v.asDouble() == Math.rint(v.asDouble()));
            case "number" -> v.isNumber();
            case "boolean" -> v.isBoolean();
            case "array" -> v.isArray();
            case "object" -> v.isObject();
            default -> true;
        };
    }

    private static String typeOf(JsonNode v) {
        if (v.isTextual()) {
            return "string";
        }
        if (v.isIntegralNumber()) {
            return "integer";
        }
        if (v.isNumber()) {
            return "number";
        }
        if (v.isBoolean()) {
            return "boolean";
        }
        return v.isArray() ? "array" : "object";
    }
}
