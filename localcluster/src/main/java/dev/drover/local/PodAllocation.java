package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.admission.PodRequests;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;

/**
 * What a kubelet counts a Pod and its Node as, and how it words a refusal: the requests of a Pod's spec (as
 * kube-scheduler and the kubelet count them, {@link PodRequests}; a container's limit stands for a request it does
 * not state, as the API server's defaulting would have made it), what the kubelet allocated the Pod (its containers'
 * {@code allocatedResources}), a Node's {@code status.allocatable}, and the kubelet's messages. Pure: no I/O.
 */
final class PodAllocation {

    private static final KubernetesSerialization SERIAL = new KubernetesSerialization();
    private static final List<String> CPU_MEMORY = List.of("cpu", "memory");

    /** Millicores and bytes. */
    record Amounts(long cpuMillis, long memoryBytes) {
        static final Amounts ZERO = new Amounts(0, 0);

        Amounts plus(Amounts o) {
            return new Amounts(cpuMillis + o.cpuMillis, memoryBytes + o.memoryBytes);
        }

        Amounts minus(Amounts o) {
            return new Amounts(cpuMillis - o.cpuMillis, memoryBytes - o.memoryBytes);
        }
    }

    /** A refusal: the reason the kubelet gives (e.g. {@code OutOfcpu}) and its message. */
    record Refusal(String reason, String message) {}

    private PodAllocation() {}

    /** A Node's {@code status.allocatable} cpu and memory (none stated: nothing). */
    static Amounts allocatable(JsonNode node) {
        JsonNode a = node.path("status").path("allocatable");
        return new Amounts(millis(a.get("cpu")), bytes(a.get("memory")));
    }

    /** What the Pod's spec requests, counted as the scheduler counts it. */
    static Amounts requested(ObjectNode pod) {
        ObjectNode copy = pod.deepCopy();
        for (String list : List.of("containers", "initContainers")) {
            for (JsonNode c : copy.path("spec").path(list)) {
                if (c instanceof ObjectNode container) {
                    container.set("resources", effectiveResources(container.path("resources")));
                }
            }
        }
        return held(copy);
    }

    /** What the kubelet allocated the Pod: its spec with each container's requests its {@code allocatedResources}. */
    static Amounts allocated(ObjectNode pod) {
        ObjectNode copy = pod.deepCopy();
        for (JsonNode c : copy.path("spec").path("containers")) {
            if (c instanceof ObjectNode container) {
                JsonNode given = status(pod, container.path("name").asText()).path("allocatedResources");
                container.withObjectProperty("resources").set("requests", cpuMemory(given));
            }
        }
        copy.remove("status");
        return held(copy);
    }

    /** Whether the Pod's spec asks for other cpu or memory than its containers were given. */
    static boolean resizeWanted(ObjectNode pod) {
        for (JsonNode c : pod.path("spec").path("containers")) {
            JsonNode wanted = effectiveResources(c.path("resources"));
            JsonNode given = status(pod, c.path("name").asText());
            if (!same(wanted.path("requests"), given.path("allocatedResources"))
                    || !same(wanted.path("limits"), given.path("resources").path("limits"))) {
                return true;
            }
        }
        return false;
    }

    /** The status of container {@code name} (missing when there is none). */
    static JsonNode status(JsonNode pod, String name) {
        for (JsonNode s : pod.path("status").path("containerStatuses")) {
            if (name.equals(s.path("name").asText())) {
                return s;
            }
        }
        return pod.path("status").path("containerStatuses").path(Integer.MAX_VALUE); // missing
    }

    /**
     * The kubelet's admission of a new Pod beside {@code used}: null when it fits {@code capacity}, else why not
     * (cpu first, as the scheduler's fit check the kubelet runs).
     */
    static Refusal admit(Amounts requested, Amounts used, Amounts capacity) {
        if (requested.cpuMillis() + used.cpuMillis() > capacity.cpuMillis()) {
            return new Refusal(
                    "OutOfcpu", notEnough("cpu", requested.cpuMillis(), used.cpuMillis(), capacity.cpuMillis()));
        }
        if (requested.memoryBytes() + used.memoryBytes() > capacity.memoryBytes()) {
            return new Refusal(
                    "OutOfmemory",
                    notEnough("memory", requested.memoryBytes(), used.memoryBytes(), capacity.memoryBytes()));
        }
        return null;
    }

    /**
     * The kubelet's decision on a resize to {@code desired} while the other Pods hold {@code others}: null when it is
     * accepted, else {@code Infeasible} (more than the Node has at all; memory first) or {@code Deferred} (not beside
     * the others now).
     */
    static Refusal resize(Amounts desired, Amounts others, Amounts capacity) {
        if (desired.memoryBytes() > capacity.memoryBytes()) {
            return new Refusal("Infeasible", capacityMessage("memory", desired.memoryBytes(), capacity.memoryBytes()));
        }
        if (desired.cpuMillis() > capacity.cpuMillis()) {
            return new Refusal("Infeasible", capacityMessage("cpu", desired.cpuMillis(), capacity.cpuMillis()));
        }
        Refusal fit = admit(desired, others, capacity);
        return fit == null ? null : new Refusal("Deferred", fit.message());
    }

    private static String notEnough(String resource, long requested, long used, long capacity) {
        return "Node didn't have enough resource: " + resource + ", requested: " + requested + ", used: " + used
                + ", capacity: " + capacity;
    }

    private static String capacityMessage(String resource, long requested, long capacity) {
        return "Node didn't have enough capacity: " + resource + ", requested: " + requested + ", capacity: "
                + capacity;
    }

    /** A container's resources with each limit standing for the request it does not state. */
    static ObjectNode effectiveResources(JsonNode resources) {
        ObjectNode out = resources instanceof ObjectNode o ? o.deepCopy() : JsonNodeFactory.instance.objectNode();
        JsonNode limits = out.path("limits");
        if (limits.isObject()) {
            ObjectNode requests = out.withObjectProperty("requests");
            limits.properties().forEach(e -> {
                if (!requests.has(e.getKey())) {
                    requests.set(e.getKey(), e.getValue());
                }
            });
        }
        return out;
    }

    /** Only the cpu and memory of {@code amounts}. */
    static ObjectNode cpuMemory(JsonNode amounts) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        for (String r : CPU_MEMORY) {
            if (amounts.has(r)) {
                out.set(r, amounts.get(r));
            }
        }
        return out;
    }

    private static boolean same(JsonNode a, JsonNode b) {
        for (String r : CPU_MEMORY) {
            BigDecimal x = PodResize.amount(a.get(r));
            BigDecimal y = PodResize.amount(b.get(r));
            if (x == null ? y != null && y.signum() != 0 : y == null ? x.signum() != 0 : x.compareTo(y) != 0) {
                return false;
            }
        }
        return true;
    }

    private static Amounts held(ObjectNode pod) {
        PodRequests.Held h = PodRequests.of(SERIAL.convertValue(pod, Pod.class));
        return new Amounts(h.cpuMillis(), h.memoryBytes());
    }

    private static long millis(JsonNode quantity) {
        BigDecimal amount = PodResize.amount(quantity);
        return amount == null
                ? 0
                : amount.movePointRight(3).setScale(0, RoundingMode.CEILING).longValueExact();
    }

    private static long bytes(JsonNode quantity) {
        BigDecimal amount = PodResize.amount(quantity);
        return amount == null ? 0 : amount.setScale(0, RoundingMode.CEILING).longValueExact();
    }
}
