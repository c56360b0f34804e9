package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationException;
import dev.cel.common.CelValidationResult;
import dev.cel.common.types.SimpleType;
import dev.cel.common.values.NullValue;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.Program;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * A CRD's {@code x-kubernetes-validations} rules, evaluated with CEL (Google's cel-java) on every create and update
 * of a custom resource, as Kubernetes 1.32's apiextensions-apiserver evaluates them: at every level of the schema
 * (properties, list items, map values), {@code self} the value there; a transition rule (one that names
 * {@code oldSelf}) only on update and only where the old object has a value at the same path (list items correlate
 * only in {@code x-kubernetes-list-type: map} lists, by their keys); a value unchanged by an update is not checked
 * again (validation ratcheting, on by default since 1.30); a status write checks the status only. A failed rule is
 * the real field error: {@code spec.nodeName: Invalid value: "string": <message>} (the value shown is the schema
 * type), {@code Forbidden} or {@code Required value} for those {@code reason}s, at {@code fieldPath} when given;
 * {@code messageExpression} is evaluated for the message. A CRD whose rule does not compile is refused.
 *
 * <p>Left out: the cost estimates and budgets (each comprehension is bounded to {@value #MAX_ITERATIONS}
 * iterations instead), the Kubernetes-specific CEL libraries beyond the standard functions and string extensions
 * ({@code quantity}, {@code url}, {@code ip}...), and typed {@code self} (values are dynamically typed, so a rule
 * that would not type-check against its schema may still run).
 */
final class CrdRules implements Admission {

    static final int MAX_ITERATIONS = 100_000;
    private static final Pattern OLD_SELF = Pattern.compile("\\boldSelf\\b");

    private static final Cel CEL = CelFactory.standardCelBuilder()
            .setOptions(CelOptions.current()
                    .comprehensionMaxIterations(MAX_ITERATIONS)
                    .enableHeterogeneousNumericComparisons(true)
                    .build())
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
            .addVar("self", SimpleType.DYN)
            .addVar("oldSelf", SimpleType.DYN)
            .addCompilerLibraries(CelExtensions.strings())
            .addRuntimeLibraries(CelExtensions.strings())
            .build();

    /** One compiled rule. */
    private record Rule(
            String source,
            Program program,
            String message,
            Program messageExpression,
            String reason,
            String fieldPath) {
        boolean transition() {
            return OLD_SELF.matcher(source).find();
        }
    }

    /** A schema node with its rules, and the nodes below it that have rules. */
    private record Node(
            String type,
            List<Rule> rules,
            Map<String, Node> properties,
            Node items,
            Node additional,
            List<String> mapKeys) {}

    /** The compiled rules of one CRD version's schema, kept while the schema is the one the catalog serves. */
    private record Compiled(JsonNode schema, Node root) {}

    private final Map<String, Compiled> cache = new ConcurrentHashMap<>();

    @Override
    public void admit(Request request) {
        ResourceType type = request.type();
        if (request.operation() == Operation.DELETE) {
            return;
        }
        if (type.equals(Catalog.CRDS)) {
            checkCompiles(request.object());
            return;
        }
        if (type.schema() == null) {
            return;
        }
        List<String> errors = errors(type, request.object(), request.oldObject(), request.subresource());
        if (!errors.isEmpty()) {
            throw new ApiFront.ApiError(
                    422,
                    "Invalid",
                    type.kind() + "." + type.group() + " \"" + request.name() + "\" is invalid: "
                            + (errors.size() == 1 ? errors.getFirst() : "[" + String.join(", ", errors) + "]"));
        }
    }

    /**
     * The field errors of {@code object}'s rules ({@code old}: the stored object on update, else null; a
     * {@code status} write checks the status only); empty when every rule holds.
     */
    List<String> errors(ResourceType type, JsonNode object, JsonNode old, String subresource) {
        List<String> errors = new ArrayList<>();
        Node root = type.schema() == null ? null : compiled(type);
        if (root == null) {
            return errors;
        }
        if ("status".equals(subresource)) {
            Node statusNode = root.properties().get("status");
            if (statusNode != null) {
                check(statusNode, object.path("status"), old == null ? null : old.path("status"), "status", errors);
            }
        } else {
            check(root, object, old, "", errors);
        }
        return errors;
    }

    private Node compiled(ResourceType type) {
        Compiled c = cache.get(type.key());
        if (c == null || c.schema() != type.schema()) {
            List<String> errors = new ArrayList<>();
            c = new Compiled(type.schema(), node(type.schema(), "", errors));
            cache.put(type.key(), c);
        }
        return c.root();
    }

    /** Refuses a CRD with a rule that does not compile, with the field path the real server names. */
    private static void checkCompiles(JsonNode crd) {
        List<String> errors = new ArrayList<>();
        for (JsonNode version : crd.path("spec").path("versions")) {
            JsonNode schema = version.path("schema").path("openAPIV3Schema");
            if (schema.isObject()) {
                node(schema, "spec.validation.openAPIV3Schema", errors);
            }
        }
        if (!errors.isEmpty()) {
            throw new ApiFront.ApiError(
                    422,
                    "Invalid",
                    "CustomResourceDefinition.apiextensions.k8s.io \""
                            + crd.path("metadata").path("name").asText() + "\" is invalid: "
                            + (errors.size() == 1 ? errors.getFirst() : "[" + String.join(", ", errors) + "]"));
        }
    }

    /** The compiled node for {@code schema}, or null when neither it nor anything below it has rules. */
    private static Node node(JsonNode schema, String path, List<String> errors) {
        List<Rule> rules = new ArrayList<>();
        int i = 0;
        for (JsonNode r : schema.path("x-kubernetes-validations")) {
            String rulePath = path + ".x-kubernetes-validations[" + i++ + "]";
            Program program = compile(r.path("rule").asText(""), rulePath + ".rule", errors);
            Program messageExpression = r.hasNonNull("messageExpression")
                    ? compile(r.path("messageExpression").asText(), rulePath + ".messageExpression", errors)
                    : null;
            if (program != null) {
                rules.add(new Rule(
                        r.path("rule").asText().strip(),
                        program,
                        r.path("message").asText(""),
                        messageExpression,
                        r.path("reason").asText("FieldValueInvalid"),
                        r.path("fieldPath").asText("")));
            }
        }
        Map<String, Node> properties = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it =
                        schema.path("properties").fields();
                it.hasNext(); ) {
            Map.Entry<String, JsonNode> p = it.next();
            Node child = node(p.getValue(), path + ".properties[" + p.getKey() + "]", errors);
            if (child != null) {
                properties.put(p.getKey(), child);
            }
        }
        Node items = schema.path("items").isObject() ? node(schema.path("items"), path + ".items", errors) : null;
        Node additional = schema.path("additionalProperties").isObject()
                ? node(schema.path("additionalProperties"), path + ".additionalProperties", errors)
                : null;
        if (rules.isEmpty() && properties.isEmpty() && items == null && additional == null) {
            return null;
        }
        List<String> keys = new ArrayList<>();
        if ("map".equals(schema.path("x-kubernetes-list-type").asText())) {
            schema.path("x-kubernetes-list-map-keys").forEach(k -> keys.add(k.asText()));
        }
        return new Node(schema.path("type").asText("object"), rules, properties, items, additional, keys);
    }

    private static Program compile(String source, String path, List<String> errors) {
        try {
            CelValidationResult result = CEL.compile(source);
            if (result.hasError()) {
                errors.add(path + ": Invalid value: " + Json.quote(source) + ": compilation failed: "
                        + result.getErrorString());
                return null;
            }
            return CEL.createProgram(result.getAst());
        } catch (CelValidationException | CelEvaluationException | RuntimeException e) {
            errors.add(path + ": Invalid value: " + Json.quote(source) + ": compilation failed: " + e.getMessage());
            return null;
        }
    }

    private static void check(Node node, JsonNode value, JsonNode old, String path, List<String> errors) {
        if (value == null || value.isMissingNode() || value.isNull()) {
            return;
        }
        if (old != null && !old.isMissingNode() && old.equals(value)) {
            return; // ratcheting: an unchanged value is not checked again
        }
        boolean hasOld = old != null && !old.isMissingNode() && !old.isNull();
        for (Rule rule : node.rules()) {
            if (rule.transition() && !hasOld) {
                continue;
            }
            Map<String, Object> vars = new HashMap<>();
            vars.put("self", cel(value));
            if (hasOld) {
                vars.put("oldSelf", cel(old));
            }
            String where = rule.fieldPath().isEmpty() ? path : path + rule.fieldPath();
            try {
                if (!Boolean.TRUE.equals(rule.program().eval(vars))) {
                    errors.add(fieldError(where, node.type(), message(rule, vars), rule.reason()));
                }
            } catch (CelEvaluationException e) {
                errors.add(fieldError(
                        where, node.type(), "rule evaluation error: " + e.getMessage(), "FieldValueInvalid"));
            }
        }
        if (value instanceof ObjectNode object) {
            for (Map.Entry<String, Node> p : node.properties().entrySet()) {
                check(
                        p.getValue(),
                        object.get(p.getKey()),
                        hasOld ? old.get(p.getKey()) : null,
                        path.isEmpty() ? p.getKey() : path + "." + p.getKey(),
                        errors);
            }
            if (node.additional() != null) {
                for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> f = it.next();
                    check(
                            node.additional(),
                            f.getValue(),
                            hasOld ? old.get(f.getKey()) : null,
                            path + "[" + f.getKey() + "]",
                            errors);
                }
            }
        }
        if (value.isArray() && node.items() != null) {
            for (int i = 0; i < value.size(); i++) {
                JsonNode item = value.get(i);
                check(node.items(), item, hasOld ? correlated(node, item, old) : null, path + "[" + i + "]", errors);
            }
        }
    }

    /** The old item of a map-type list with the same keys as {@code item}; null for other lists. */
    private static JsonNode correlated(Node list, JsonNode item, JsonNode oldList) {
        if (list.mapKeys().isEmpty()) {
            return null;
        }
        for (JsonNode candidate : oldList) {
            boolean same = true;
            for (String key : list.mapKeys()) {
                same &= candidate.path(key).equals(item.path(key));
            }
            if (same) {
                return candidate;
            }
        }
        return null;
    }

    private static String message(Rule rule, Map<String, Object> vars) {
        if (rule.messageExpression() != null) {
            try {
                if (rule.messageExpression().eval(vars) instanceof String s && !s.isBlank()) {
                    return s;
                }
            } catch (CelEvaluationException e) {
                // the static message, as the real server falls back to it
            }
        }
        return rule.message().isEmpty() ? "failed rule: " + rule.source() : rule.message();
    }

    private static String fieldError(String path, String type, String message, String reason) {
        return switch (reason) {
            case "FieldValueForbidden" -> path + ": Forbidden: " + message;
            case "FieldValueRequired" -> path + ": Required value: " + message;
            default -> path + ": Invalid value: " + Json.quote(type) + ": " + message;
        };
    }

    /** A JSON value as CEL sees it: maps, lists, int (long), double, string, bool, null. */
    static Object cel(JsonNode value) {
        if (value.isObject()) {
            Map<String, Object> map = new LinkedHashMap<>();
            value.fields().forEachRemaining(f -> map.put(f.getKey(), cel(f.getValue())));
            return map;
        }
        if (value.isArray()) {
            List<Object> list = new ArrayList<>(value.size());
            value.forEach(v -> list.add(cel(v)));
            return list;
        }
        if (value.isIntegralNumber()) {
            return value.asLong();
        }
        if (value.isNumber()) {
            return value.asDouble();
        }
        if (value.isBoolean()) {
            return value.asBoolean();
        }
        if (value.isNull()) {
            return NullValue.NULL_VALUE;
        }
        return value.asText();
    }
}
