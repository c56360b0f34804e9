package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationResult;
import dev.cel.common.types.SimpleType;
import dev.cel.common.values.NullValue;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.Program;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * {@code admissionregistration.k8s.io/v1} ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding, enforced on
 * every create, update and delete as Kubernetes 1.32 enforces them: a binding applies its policy to the requests that
 * both the policy's {@code matchConstraints} and the binding's {@code matchResources} match (resource rules by API
 * group, version, resource with subresources, operation and scope; {@code excludeResourceRules};
 * {@code namespaceSelector}; {@code objectSelector}) and whose {@code matchConditions} hold; its {@code validations}
 * then see {@code object}, {@code oldObject}, {@code request} (kind, resource, subResource, name, namespace,
 * operation, userInfo with extra, dryRun), {@code params} (the binding's {@code paramRef}, by name), {@code
 * namespaceObject} (the namespace of a namespaced request, a token request's too) and {@code variables} (a variable
 * that fails to evaluate fails every expression that uses it). A subresource's request matches only rules that name
 * the subresource; a token request ({@code serviceaccounts/token}) is of kind {@code authentication.k8s.io/v1
 * TokenRequest}. A failed validation with the {@code Deny} action refuses the request with the real message
 * ({@code ValidatingAdmissionPolicy 'P' with binding 'B' denied request: MSG}) and the code its {@code reason} names
 * (422 Invalid by default, 403 Forbidden, 401 Unauthorized, 413 RequestEntityTooLarge); an expression that fails to
 * evaluate refuses too unless the policy's {@code failurePolicy} is {@code Ignore}. Policies apply to every user, the
 * administrator included.
 *
 * <p>Left out: the {@code Warn} and {@code Audit} actions (no warning headers, no audit log: only {@code Deny}
 * acts), {@code authorizer} in expressions, param selectors (a {@code paramRef} names one object), and the policy's
 * status (type checking warnings).
 */
final class AdmissionPolicies implements Admission {

    static final String GROUP = "admissionregistration.k8s.io";
    static final ResourceType POLICIES =
            ResourceType.builtIn(GROUP, "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", false);
    static final ResourceType BINDINGS = ResourceType.builtIn(
            GROUP, "v1", "validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", false);

    private static final Cel CEL = CelFactory.standardCelBuilder()
            .setOptions(CelOptions.current()
                    .comprehensionMaxIterations(CrdRules.MAX_ITERATIONS)
                    .enableHeterogeneousNumericComparisons(true)
                    .build())
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
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
    private final Catalog catalog;
    private final Map<String, Program> programs = new ConcurrentHashMap<>();

    AdmissionPolicies(ObjectStore store, Catalog catalog) {
        this.store = store;
        this.catalog = catalog;
    }

    @Override
    public void admit(Request request) {
        if (request.type().equals(Catalog.CRDS) && request.operation() == Operation.DELETE) {
            return;
        }
        for (ObjectNode binding : store.list(BINDINGS, null).items()) {
            JsonNode spec = binding.path("spec");
            if (!contains(spec.path("validationActions"), "Deny")) {
                continue; // Warn and Audit only: nothing this server does
            }
            ObjectNode policy;
            try {
                policy = store.get(POLICIES, null, spec.path("policyName").asText(""));
            } catch (ApiFront.ApiError missing) {
                continue;
            }
            if (!matches(policy.path("spec").path("matchConstraints"), request, false)
                    || (spec.has("matchResources") && !matches(spec.path("matchResources"), request, true))) {
                continue;
            }
            String name = policy.path("metadata").path("name").asText();
            String bindingName = binding.path("metadata").path("name").asText();
            evaluate(
                    policy.path("spec"),
                    spec,
                    request,
                    "ValidatingAdmissionPolicy '" + name + "' with binding '" + bindingName + "' denied request: ");
        }
    }

    private void evaluate(JsonNode policy, JsonNode binding, Request request, String denied) {
        boolean ignoreErrors = "Ignore".equals(policy.path("failurePolicy").asText());
        Map<String, Object> vars = new HashMap<>();
        vars.put("object", request.object() == null ? NullValue.NULL_VALUE : CrdRules.cel(request.object()));
        vars.put("oldObject", request.oldObject() == null ? NullValue.NULL_VALUE : CrdRules.cel(request.oldObject()));
        vars.put("request", requestValue(request));
        vars.put("namespaceObject", namespaceObject(request));
        Object params = params(policy, binding, request);
        if (params == null) {
            throw deny(
                    denied + "failed to configure binding: no params found for policy binding with `Deny`"
                            + " parameterNotFoundAction",
                    "");
        }
        vars.put("params", params);
        Map<String, Object> variables = new LinkedHashMap<>();
        vars.put("variables", variables);
        // as Kubernetes: a variable that fails makes every expression that uses it fail, with its error
        Map<String, String> failed = new LinkedHashMap<>();
        for (JsonNode v : policy.path("variables")) {
            String variable = v.path("name").asText();
            try {
                variables.put(variable, eval(v.path("expression").asText(), vars, failed));
            } catch (Exception e) {
                variables.put(variable, NullValue.NULL_VALUE);
                failed.put(variable, e.getMessage());
            }
        }
        for (JsonNode condition : policy.path("matchConditions")) {
            try {
                if (!Boolean.TRUE.equals(eval(condition.path("expression").asText(), vars, failed))) {
                    return;
                }
            } catch (Exception e) {
                if (!ignoreErrors) {
                    throw deny(
                            denied + "error evaluating match condition '"
                                    + condition.path("name").asText() + "': " + e.getMessage(),
                            "");
                }
                return;
            }
        }
        for (JsonNode validation : policy.path("validations")) {
            String expression = validation.path("expression").asText();
            Object result;
            try {
                result = eval(expression, vars, failed);
            } catch (Exception e) {
                if (ignoreErrors) {
                    continue;
                }
                throw deny(denied + "expression '" + expression + "' resulted in error: " + e.getMessage(), "");
            }
            if (!Boolean.TRUE.equals(result)) {
                throw deny(
                        denied + message(validation, vars, failed),
                        validation.path("reason").asText(""));
            }
        }
    }

    private String message(JsonNode validation, Map<String, Object> vars, Map<String, String> failed) {
        if (validation.hasNonNull("messageExpression")) {
            try {
                if (eval(validation.path("messageExpression").asText(), vars, failed) instanceof String s
                        && !s.isBlank()) {
                    return s;
                }
            } catch (Exception e) {
                // the static message instead
            }
        }
        String message = validation.path("message").asText("");
        return message.isEmpty()
                ? "failed expression: " + validation.path("expression").asText()
                : message;
    }

    /** Evaluates {@code expression}; it fails when it uses a variable of the {@code failed} ones. */
    private Object eval(String expression, Map<String, Object> vars, Map<String, String> failed) throws Exception {
        for (Map.Entry<String, String> f : failed.entrySet()) {
            if (Pattern.compile("\\bvariables\\." + Pattern.quote(f.getKey()) + "\\b")
                    .matcher(expression)
                    .find()) {
                throw new IllegalArgumentException("variable '" + f.getKey() + "' resulted in error: " + f.getValue());
            }
        }
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

    static ApiFront.ApiError deny(String message, String reason) {
        return switch (reason) {
            case "Forbidden" -> new ApiFront.ApiError(403, "Forbidden", message);
            case "Unauthorized" -> new ApiFront.ApiError(401, "Unauthorized", message);
            case "RequestEntityTooLarge" -> new ApiFront.ApiError(413, "RequestEntityTooLarge", message);
            default -> new ApiFront.ApiError(422, "Invalid", message);
        };
    }

    /**
     * Whether {@code match} (a policy's matchConstraints, or a binding's matchResources, where no resource rules
     * means every resource the policy matches) selects the request.
     */
    boolean matches(JsonNode match, Request request, boolean noRulesMatchAll) {
        if (!match.isObject()) {
            return false;
        }
        boolean included = noRulesMatchAll && match.path("resourceRules").isEmpty()
                || anyRule(match.path("resourceRules"), request);
        if (!included || anyRule(match.path("excludeResourceRules"), request)) {
            return false;
        }
        JsonNode object = request.object() != null ? request.object() : request.oldObject();
        if (match.has("objectSelector")
                && !Selectors.matches(
                        match.path("objectSelector"), object.path("metadata").path("labels"))) {
            return false;
        }
        if (match.has("namespaceSelector") && request.type().namespaced()) {
            try {
                ObjectNode ns = store.get(Catalog.NAMESPACES, null, request.namespace());
                return Selectors.matches(
                        match.path("namespaceSelector"), ns.path("metadata").path("labels"));
            } catch (ApiFront.ApiError gone) {
                return false;
            }
        }
        return true;
    }

    private static boolean anyRule(JsonNode rules, Request request) {
        ResourceType type = request.type();
        for (JsonNode rule : rules) {
            String scope = rule.path("scope").asText("*");
            boolean scoped = scope.equals("*") || scope.equals(type.namespaced() ? "Namespaced" : "Cluster");
            if (scoped
                    && contains(rule.path("apiGroups"), type.group())
                    && contains(rule.path("apiVersions"), type.version())
                    && contains(rule.path("operations"), request.operation().name())
                    && resourceMatches(rule.path("resources"), type.plural(), request.subresource())) {
                return true;
            }
        }
        return false;
    }

    private static boolean resourceMatches(JsonNode resources, String plural, String subresource) {
        for (JsonNode r : resources) {
            String s = r.asText();
            if (subresource == null) {
                if (s.equals("*") || s.equals(plural)) {
                    return true;
                }
            } else if (s.equals("*/*")
                    || s.equals(plural + "/" + subresource)
                    || s.equals("*/" + subresource)
                    || s.equals(plural + "/*")) {
                return true;
            }
        }
        return false;
    }

    static boolean contains(JsonNode values, String value) {
        for (JsonNode v : values) {
            if (v.asText().equals("*") || v.asText().equals(value)) {
                return true;
            }
        }
        return false;
    }

    static Map<String, Object> requestValue(Request request) {
        ResourceType type = request.type();
        Map<String, Object> r = new LinkedHashMap<>();
        // a subresource's own kind, as its REST storage names it: a token request is a TokenRequest
        r.put(
                "kind",
                type.equals(Catalog.SERVICE_ACCOUNTS) && "token".equals(request.subresource())
                        ? Map.of(
                                "group",
                                TokenRequests.GROUP,
                                "version",
                                TokenRequests.VERSION,
                                "kind",
                                TokenRequests.KIND)
                        : Map.of("group", type.group(), "version", type.version(), "kind", type.kind()));
        r.put("resource", Map.of("group", type.group(), "version", type.version(), "resource", type.plural()));
        r.put("subResource", request.subresource() == null ? "" : request.subresource());
        r.put("name", request.name() == null ? "" : request.name());
        r.put("namespace", request.namespace() == null ? "" : request.namespace());
        r.put("operation", request.operation().name());
        r.put("dryRun", request.dryRun());
        UserInfo user = request.user();
        Map<String, Object> extra = new LinkedHashMap<>();
        user.extra().forEach((k, v) -> extra.put(k, List.copyOf(v)));
        r.put(
                "userInfo",
                Map.of(
                        "username",
                        user.username(),
                        "uid",
                        user.uid(),
                        "groups",
                        new ArrayList<>(user.groups()),
                        "extra",
                        extra));
        return r;
    }

    Object namespaceObject(Request request) {
        if (request.namespace() == null || !request.type().namespaced()) {
            return NullValue.NULL_VALUE;
        }
        try {
            return CrdRules.cel(store.get(Catalog.NAMESPACES, null, request.namespace()));
        } catch (ApiFront.ApiError gone) {
            return NullValue.NULL_VALUE;
        }
    }

    /** The binding's params object as CEL sees it; null when one is required and missing (deny). */
    Object params(JsonNode policy, JsonNode binding, Request request) {
        JsonNode kind = policy.path("paramKind");
        JsonNode ref = binding.path("paramRef");
        if (!kind.isObject() || !ref.isObject()) {
            return NullValue.NULL_VALUE;
        }
        ResourceType type = catalog.types().stream()
                .filter(t -> t.groupVersion().equals(kind.path("apiVersion").asText())
                        && t.kind().equals(kind.path("kind").asText()))
                .findFirst()
                .orElse(null);
        boolean allow = "Allow".equals(ref.path("parameterNotFoundAction").asText("Deny"));
        if (type == null) {
            return allow ? NullValue.NULL_VALUE : null;
        }
        String namespace = type.namespaced()
                ? ref.path("namespace").asText(request.namespace() == null ? "" : request.namespace())
                : null;
        try {
            return CrdRules.cel(store.get(type, namespace, ref.path("name").asText("")));
        } catch (ApiFront.ApiError missing) {
            return allow ? NullValue.NULL_VALUE : null;
        }
    }
}
