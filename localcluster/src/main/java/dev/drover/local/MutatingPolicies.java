package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors;
import com.google.protobuf.ListValue;
import com.google.protobuf.Message;
import com.google.protobuf.StructProto;
import com.google.protobuf.Value;
import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationResult;
import dev.cel.common.types.SimpleType;
import dev.cel.common.values.NullValue;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.Program;
import dev.drover.common.UserText;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code admissionregistration.k8s.io/v1} MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding (served from
 * Kubernetes 1.36, {@link KubeVersion#mutatingAdmissionPolicies}), applied to every create and update before
 * validation, as a real API server applies them: a binding applies its policy to the requests its policy's
 * {@code matchConstraints} and its own {@code matchResources} match (as {@link AdmissionPolicies} matches them) and
 * whose {@code matchConditions} hold; its {@code mutations} then run in order, each on what the one before left. A
 * mutation of {@code patchType: JSONPatch} is a CEL expression (with {@code object}, {@code oldObject}, {@code
 * request}, {@code params}, {@code namespaceObject} and {@code variables}) that returns a list of {@code
 * JSONPatch{op, path, value}}, applied as RFC 6902 patches. An expression that fails, or a patch that does not apply,
 * refuses the request unless the policy's {@code failurePolicy} is {@code Ignore}.
 *
 * <p>Refused when a policy is written: a mutation of {@code patchType: ApplyConfiguration} (this server does JSON
 * patches only), an expression that does not compile, one longer than {@link #MAX_EXPRESSION_CHARS}. Bounded when one
 * runs: CEL's comprehensions as in the CRD rules, at most {@link #MAX_OPERATIONS} patch operations a mutation. Left
 * out: {@code reinvocationPolicy} (no policy runs twice) and the policy's status.
 */
final class MutatingPolicies implements Admission {

    static final ResourceType POLICIES = ResourceType.builtIn(
            AdmissionPolicies.GROUP, "v1", "mutatingadmissionpolicies", "MutatingAdmissionPolicy", false);
    static final ResourceType BINDINGS = ResourceType.builtIn(
            AdmissionPolicies.GROUP, "v1", "mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding", false);

    /** The longest expression a policy may hold (a real API server's limit for admission policy expressions). */
    static final int MAX_EXPRESSION_CHARS = 5 * 1024;
    /** The most patch operations one mutation may return. */
    static final int MAX_OPERATIONS = 1_000;

    private static final Descriptors.Descriptor JSON_PATCH = jsonPatchType();

    private static final Cel CEL = CelFactory.standardCelBuilder()
            .setOptions(CelOptions.current()
                    .comprehensionMaxIterations(CrdRules.MAX_ITERATIONS)
                    .enableHeterogeneousNumericComparisons(true)
                    .build())
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
            .addMessageTypes(JSON_PATCH)
            .addVar("object", SimpleType.DYN)
            .addVar("oldObject", SimpleType.DYN)
            .addVar("request", SimpleType.DYN)
            .addVar("params", SimpleType.DYN)
            .addVar("namespaceObject", SimpleType.DYN)
            .addVar("variables", SimpleType.DYN)
            .addCompilerLibraries(CelExtensions.strings())
            .addRuntimeLibraries(CelExtensions.strings())
            .build();

    private final ObjectStore store;
    private final AdmissionPolicies matching;
    private final Map<String, Program> programs = new ConcurrentHashMap<>();

    MutatingPolicies(ObjectStore store, Catalog catalog) {
        this.store = store;
        this.matching = new AdmissionPolicies(store, catalog);
    }

    /** Refuses a policy this server could not apply, each with one sentence naming the field. */
    @Override
    public void admit(Request request) {
        if (!request.type().equals(POLICIES) || request.object() == null) {
            return;
        }
        JsonNode spec = request.object().path("spec");
        int i = 0;
        for (JsonNode mutation : spec.path("mutations")) {
            String field = "spec.mutations[" + i++ + "]";
            String type = mutation.path("patchType").asText("");
            if (type.equals("ApplyConfiguration")) {
                throw invalid(
                        field + ".patchType: Unsupported value: \"ApplyConfiguration\": the local cluster supports"
                                + " JSONPatch mutations only; write this mutation as patchType JSONPatch");
            }
            if (!type.equals("JSONPatch")) {
                throw invalid(field + ".patchType: Unsupported value: " + Json.quote(type)
                        + ": supported values: \"JSONPatch\"");
            }
            checkExpression(
                    field + ".jsonPatch.expression", mutation.path("jsonPatch").path("expression"));
        }
        checkAll(spec.path("variables"), "spec.variables");
        checkAll(spec.path("matchConditions"), "spec.matchConditions");
    }

    private void checkAll(JsonNode named, String field) {
        int i = 0;
        for (JsonNode n : named) {
            checkExpression(field + "[" + i++ + "].expression", n.path("expression"));
        }
    }

    private void checkExpression(String field, JsonNode expression) {
        String text = expression.asText("");
        if (text.isBlank()) {
            throw invalid(field + ": Required value: an expression is required");
        }
        if (text.length() > MAX_EXPRESSION_CHARS) {
            throw invalid(field + ": Too long: may not be more than " + MAX_EXPRESSION_CHARS + " characters");
        }
        CelValidationResult compiled = CEL.compile(text);
        if (compiled.hasError()) {
            throw invalid(field + ": Invalid value: " + Json.quote(UserText.cut(text, 200)) + ": compilation failed: "
                    + compiled.getErrorString());
        }
    }

    @Override
    public ObjectNode mutate(Request request) {
        ObjectNode object = request.object();
        if (object == null || request.operation() == Operation.DELETE) {
            return object;
        }
        for (ObjectNode binding : store.list(BINDINGS, null).items()) {
            JsonNode spec = binding.path("spec");
            ObjectNode policy;
            try {
                policy = store.get(POLICIES, null, spec.path("policyName").asText(""));
            } catch (ApiFront.ApiError missing) {
                continue;
            }
            Request current = request.with(object);
            if (!matching.matches(policy.path("spec").path("matchConstraints"), current, false)
                    || (spec.has("matchResources") && !matching.matches(spec.path("matchResources"), current, true))) {
                continue;
            }
            String prefix = "MutatingAdmissionPolicy '"
                    + policy.path("metadata").path("name").asText() + "' with binding '"
                    + binding.path("metadata").path("name").asText() + "' denied request: ";
            object = apply(policy.path("spec"), spec, current, prefix);
        }
        return object;
    }

    /** The object after the policy's mutations (or as it was, when its conditions do not hold). */
    private ObjectNode apply(JsonNode policy, JsonNode binding, Request request, String denied) {
        boolean ignoreErrors = "Ignore".equals(policy.path("failurePolicy").asText());
        ObjectNode object = request.object();
        Map<String, Object> vars = new HashMap<>();
        vars.put("object", CrdRules.cel(object));
        vars.put("oldObject", request.oldObject() == null ? NullValue.NULL_VALUE : CrdRules.cel(request.oldObject()));
        vars.put("request", AdmissionPolicies.requestValue(request));
        vars.put("namespaceObject", matching.namespaceObject(request));
        Object params = matching.params(policy, binding, request);
        vars.put("params", params == null ? NullValue.NULL_VALUE : params);
        Map<String, Object> variables = new LinkedHashMap<>();
        vars.put("variables", variables);
        try {
            for (JsonNode v : policy.path("variables")) {
                variables.put(v.path("name").asText(), eval(v.path("expression").asText(), vars));
            }
            for (JsonNode condition : policy.path("matchConditions")) {
                if (!Boolean.TRUE.equals(eval(condition.path("expression").asText(), vars))) {
                    return object;
                }
            }
            for (JsonNode mutation : policy.path("mutations")) {
                String expression =
                        mutation.path("jsonPatch").path("expression").asText();
                ArrayNode patch = patch(eval(expression, vars));
                if (!(Patches.apply(object, patch, true) instanceof ObjectNode patched)) {
                    throw new IllegalArgumentException("the JSON patch does not leave an object");
                }
                object = patched;
                vars.put("object", CrdRules.cel(object));
            }
            return object;
        } catch (Exception e) {
            if (ignoreErrors) {
                return request.object();
            }
            throw AdmissionPolicies.deny(denied + e.getMessage(), "");
        }
    }

    private Object eval(String expression, Map<String, Object> vars) throws Exception {
        Program program = programs.get(expression);
        if (program == null) {
            CelValidationResult compiled = CEL.compile(expression);
            if (compiled.hasError()) {
                throw new IllegalArgumentException("compilation failed: " + compiled.getErrorString());
            }
            program = CEL.createProgram(compiled.getAst());
            if (programs.size() < 10_000) {
                programs.put(expression, program);
            }
        }
        return program.eval(vars);
    }

    /** A JSONPatch expression's result as an RFC 6902 patch; anything else is refused with what it was. */
    static ArrayNode patch(Object result) {
        if (!(result instanceof List<?> list)) {
            throw new IllegalArgumentException("a JSONPatch expression must return a list of JSONPatch, not "
                    + (result == null ? "null" : result.getClass().getSimpleName()));
        }
        if (list.size() > MAX_OPERATIONS) {
            throw new IllegalArgumentException("a JSONPatch expression returned " + list.size()
                    + " operations, more than the " + MAX_OPERATIONS + " allowed");
        }
        ArrayNode patch = JsonNodeFactory.instance.arrayNode();
        for (Object item : list) {
            if (!(item instanceof Message m) || !m.getDescriptorForType().equals(JSON_PATCH)) {
                throw new IllegalArgumentException("a JSONPatch expression must return a list of JSONPatch");
            }
            ObjectNode op = patch.addObject();
            op.put("op", (String) m.getField(JSON_PATCH.findFieldByName("op")));
            op.put("path", (String) m.getField(JSON_PATCH.findFieldByName("path")));
            Descriptors.FieldDescriptor value = JSON_PATCH.findFieldByName("value");
            if (m.hasField(value)) {
                op.set("value", json((Value) m.getField(value)));
            }
        }
        return patch;
    }

    private static JsonNode json(Value value) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        return switch (value.getKindCase()) {
            case NUMBER_VALUE -> {
                double d = value.getNumberValue();
                yield d == Math.rint(d) && Math.abs(d) < 1e15 ? f.numberNode((long) d) : f.numberNode(d);
            }
            case STRING_VALUE -> f.textNode(value.getStringValue());
            case BOOL_VALUE -> f.booleanNode(value.getBoolValue());
            case STRUCT_VALUE -> {
                ObjectNode o = f.objectNode();
                value.getStructValue().getFieldsMap().forEach((k, v) -> o.set(k, json(v)));
                yield o;
            }
            case LIST_VALUE -> {
                ArrayNode a = f.arrayNode();
                ListValue l = value.getListValue();
                l.getValuesList().forEach(v -> a.add(json(v)));
                yield a;
            }
            default -> f.nullNode();
        };
    }

    /** The CEL type {@code JSONPatch} of Kubernetes' mutation expressions, as a message type CEL can build. */
    private static Descriptors.Descriptor jsonPatchType() {
        FileDescriptorProto file = FileDescriptorProto.newBuilder()
                .setName("drover/local/jsonpatch.proto")
                .setSyntax("proto3")
                .addDependency("google/protobuf/struct.proto")
                .addMessageType(DescriptorProto.newBuilder()
                        .setName("JSONPatch")
                        .addField(field("op", 1, FieldDescriptorProto.Type.TYPE_STRING))
                        .addField(field("path", 2, FieldDescriptorProto.Type.TYPE_STRING))
                        .addField(field("value", 3, FieldDescriptorProto.Type.TYPE_MESSAGE)
                                .setTypeName(".google.protobuf.Value")))
                .build();
        try {
            return Descriptors.FileDescriptor.buildFrom(
                            file, new Descriptors.FileDescriptor[] {StructProto.getDescriptor()})
                    .findMessageTypeByName("JSONPatch");
        } catch (Descriptors.DescriptorValidationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static FieldDescriptorProto.Builder field(String name, int number, FieldDescriptorProto.Type type) {
        return FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type);
    }

    private static ApiFront.ApiError invalid(String message) {
        return new ApiFront.ApiError(422, "Invalid", "MutatingAdmissionPolicy is invalid: " + message);
    }
}
