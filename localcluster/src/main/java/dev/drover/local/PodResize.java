package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A write through a Pod's {@code resize} subresource, as kube-apiserver's pod resize strategy and
 * {@code ValidatePodResize} take it: of the proposed Pod only the containers' {@code resources} and
 * {@code resizePolicy} are kept (everything else, status and metadata included, stays the stored Pod's, silently, as
 * on a real server), and the result is refused with a 422 when containers were added, removed, renamed or reordered,
 * when the Pod's QoS class would change, when a request or limit is removed, when a request exceeds its limit, or
 * when a resource other than cpu and memory changes. Only sidecars (init containers with {@code restartPolicy:
 * Always}) among the init containers may be resized. Pure: no I/O.
 */
final class PodResize {

    static final String SUBRESOURCE = "resize";

    private static final List<String> RESIZABLE = List.of("cpu", "memory");

    private PodResize() {}

    /** The Pod a resize of {@code old} to {@code proposed} stores; a 422 naming every refused change. */
    static ObjectNode prepare(ObjectNode old, ObjectNode proposed) {
        ObjectNode next = old.deepCopy();
        List<String> errors = new ArrayList<>(); // each "field: Forbidden: why" or "field: Invalid value: ...: why"
        boolean ordered = true;
        for (String list : List.of("containers", "initContainers")) {
            JsonNode was = old.path("spec").path(list);
            JsonNode now = proposed.path("spec").path(list);
            if (was.size() != now.size()) {
                errors.add("spec." + list + ": Forbidden: containers may not be added or removed on resize");
                ordered = false;
                continue;
            }
            for (int i = 0; i < was.size(); i++) {
                if (!was.get(i).path("name").equals(now.get(i).path("name"))) {
                    errors.add("spec." + list + "[" + i
                            + "].name: Forbidden: containers may not be renamed or reordered on resize");
                    ordered = false;
                }
            }
        }
        if (!ordered) {
            throw invalid(old, errors);
        }
        for (String list : List.of("containers", "initContainers")) {
            if (!(next.path("spec").get(list) instanceof ArrayNode containers)) {
                continue;
            }
            for (int i = 0; i < containers.size(); i++) {
                ObjectNode container = (ObjectNode) containers.get(i);
                JsonNode now = proposed.path("spec").path(list).get(i);
                copyOrRemove(container, now, "resources");
                copyOrRemove(container, now, "resizePolicy");
            }
        }
        if (!qos(old).equals(qos(next))) {
            errors.add(
                    "spec: Invalid value: \"" + qos(old) + "\": Pod QOS Class may not change as a result of resizing");
        }
        boolean othersChanged = false;
        for (String list : List.of("containers", "initContainers")) {
            JsonNode was = old.path("spec").path(list);
            JsonNode now = next.path("spec").path(list);
            for (int i = 0; i < was.size(); i++) {
                String path = "spec." + list + "[" + i + "].resources";
                JsonNode before = was.get(i).path("resources");
                JsonNode after = now.get(i).path("resources");
                boolean sidecar = list.equals("containers")
                        || "Always".equals(was.get(i).path("restartPolicy").asText());
                if (!sidecar) {
                    if (!before.equals(after)) {
                        errors.add(path + ": Forbidden: resources for non-sidecar init containers are immutable");
                    }
                    continue;
                }
                for (String kind : List.of("requests", "limits")) {
                    for (String resource : RESIZABLE) {
                        if (before.path(kind).has(resource) && !after.path(kind).has(resource)) {
                            errors.add(path + "." + kind + ": Forbidden: resource " + kind + " cannot be removed");
                        }
                    }
                }
                for (String resource : RESIZABLE) {
                    BigDecimal request = amount(after.path("requests").get(resource));
                    BigDecimal limit = amount(after.path("limits").get(resource));
                    if (request != null && limit != null && request.compareTo(limit) > 0) {
                        errors.add(path + ".requests: Invalid value: \""
                                + after.path("requests").path(resource).asText() + "\": must be less than or equal to "
                                + resource + " limit of "
                                + after.path("limits").path(resource).asText());
                    }
                }
                othersChanged |= !withoutResizable(before).equals(withoutResizable(after));
            }
        }
        if (othersChanged) {
            errors.add("spec: Forbidden: only cpu and memory resources are mutable");
        }
        if (!errors.isEmpty()) {
            throw invalid(old, errors);
        }
        // the version the writer read, for the store's conflict check; the server's own metadata stays
        JsonNode rv = proposed.path("metadata").get("resourceVersion");
        if (rv != null) {
            next.withObjectProperty("metadata").set("resourceVersion", rv);
        }
        JsonNode managed = proposed.path("metadata").get("managedFields");
        if (managed != null) {
            next.withObjectProperty("metadata").set("managedFields", managed);
        }
        return next;
    }

    /**
     * A strategic merge patch of a Pod as a merge patch: its {@code containers} and {@code initContainers} are merged
     * element by element by name, as their strategic merge key says (so {@code kubectl patch pod P --subresource
     * resize -p '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}'} changes that one
     * request); everything else is merged as a merge patch merges it.
     */
    static JsonNode strategicAsMerge(JsonNode current, JsonNode patch) {
        if (!(patch instanceof ObjectNode p) || !(p.get("spec") instanceof ObjectNode)) {
            return patch;
        }
        ObjectNode out = p.deepCopy();
        ObjectNode spec = (ObjectNode) out.get("spec");
        for (String list : List.of("containers", "initContainers")) {
            if (!(spec.get(list) instanceof ArrayNode items)) {
                continue;
            }
            ArrayNode merged = current.path("spec").get(list) instanceof ArrayNode a
                    ? a.deepCopy()
                    : JsonNodeFactory.instance.arrayNode();
            for (JsonNode item : items) {
                int at = -1;
                for (int i = 0; i < merged.size(); i++) {
                    if (merged.get(i).path("name").equals(item.path("name"))) {
                        at = i;
                    }
                }
                if (at < 0) {
                    merged.add(item);
                } else {
                    merged.set(at, Patches.merge(merged.get(at), item));
                }
            }
            spec.set(list, merged);
        }
        return out;
    }

    /**
     * The Pod's QoS class as kube-apiserver computes it from its spec: {@code BestEffort} without any cpu or memory
     * request or limit above zero, {@code Guaranteed} when every container limits both and requests what it limits,
     * else {@code Burstable}.
     */
    static String qos(JsonNode pod) {
        boolean any = false;
        boolean guaranteed = true;
        for (String list : List.of("initContainers", "containers")) {
            for (JsonNode container : pod.path("spec").path(list)) {
                Map<String, BigDecimal> requests =
                        positive(container.path("resources").path("requests"));
                Map<String, BigDecimal> limits =
                        positive(container.path("resources").path("limits"));
                any |= !requests.isEmpty() || !limits.isEmpty();
                if (!limits.keySet().containsAll(RESIZABLE)) {
                    guaranteed = false;
                }
                for (Map.Entry<String, BigDecimal> r : requests.entrySet()) {
                    BigDecimal limit = limits.get(r.getKey());
                    if (limit == null || limit.compareTo(r.getValue()) != 0) {
                        guaranteed = false;
                    }
                }
            }
        }
        if (!any) {
            return "BestEffort";
        }
        return guaranteed ? "Guaranteed" : "Burstable";
    }

    private static Map<String, BigDecimal> positive(JsonNode amounts) {
        Map<String, BigDecimal> out = new java.util.HashMap<>();
        for (String resource : RESIZABLE) {
            BigDecimal amount = amount(amounts.get(resource));
            if (amount != null && amount.signum() > 0) {
                out.put(resource, amount);
            }
        }
        return out;
    }

    /** A quantity's amount, null when absent or not a quantity (the whole pod's validation is not ours to do). */
    static BigDecimal amount(JsonNode quantity) {
        if (quantity == null || quantity.isNull() || quantity.isMissingNode()) {
            return null;
        }
        try {
            return Quantity.getAmountInBytes(new Quantity(quantity.asText()));
        } catch (IllegalArgumentException | ArithmeticException e) {
            return null;
        }
    }

    private static JsonNode withoutResizable(JsonNode resources) {
        if (!(resources instanceof ObjectNode o)) {
            return resources;
        }
        ObjectNode copy = o.deepCopy();
        for (String kind : List.of("requests", "limits")) {
            if (copy.get(kind) instanceof ObjectNode amounts) {
                amounts.remove(Set.copyOf(RESIZABLE));
                if (amounts.isEmpty()) {
                    copy.remove(kind);
                }
            }
        }
        return copy;
    }

    private static void copyOrRemove(ObjectNode container, JsonNode from, String field) {
        JsonNode value = from.get(field);
        if (value == null || value.isNull()) {
            container.remove(field);
        } else {
            container.set(field, value.deepCopy());
        }
    }

    private static ApiFront.ApiError invalid(JsonNode pod, List<String> errors) {
        return new Invalid(pod.path("metadata").path("name").asText(""), errors);
    }

    /**
     * The API server's 422 for a refused resize, with a cause per refusal (kubectl prints the causes: {@code The
     * Pod "web" is invalid: spec: Forbidden: ...}).
     */
    static final class Invalid extends ApiFront.ApiError {
        final ArrayNode causes = JsonNodeFactory.instance.arrayNode();

        Invalid(String name, List<String> errors) {
            super(
                    422,
                    "Invalid",
                    "Pod \"" + name + "\" is invalid: "
                            + (errors.size() == 1 ? errors.getFirst() : "[" + String.join(", ", errors) + "]"),
                    name,
                    "",
                    "Pod");
            for (String error : errors) {
                int colon = error.indexOf(": ");
                String detail = error.substring(colon + 2);
                causes.addObject()
                        .put("reason", detail.startsWith("Forbidden") ? "FieldValueForbidden" : "FieldValueInvalid")
                        .put("message", detail)
                        .put("field", error.substring(0, colon));
            }
        }
    }
}
