package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A kubelet stand-in for the local cluster's own nodes, in the API server's process: it runs no containers, but
 * admits and resizes the Pods bound to its nodes as a kubelet's admission and allocation manager decide, from the
 * store's changes (one thread, woken by them).
 *
 * <ul>
 *   <li>A Pod bound to one of its nodes that has no status yet is admitted when its requests fit the Node's
 *       {@code status.allocatable} beside the Pods running there: phase {@code Running}, Ready, its containers'
 *       {@code allocatedResources} and {@code resources}; else it fails as the kubelet rejects it ({@code OutOfcpu},
 *       {@code OutOfmemory}, "Pod was rejected: Node didn't have enough resource: ...").
 *   <li>From 1.33, a running Pod whose spec asks for other cpu or memory than it was allocated (a resize) is resized
 *       when that fits beside the others; else it gets the condition {@code PodResizePending}, reason {@code
 *       Infeasible} (more than the Node has) or {@code Deferred} (retried whenever a Pod on the node changes, so it is
 *       accepted once room frees). From 1.34 its status and conditions carry the generation decided on.
 * </ul>
 */
final class LocalKubelet implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LocalKubelet.class);
    static final String RESIZE_PENDING = "PodResizePending";

    private final ObjectStore store;
    private final Set<String> nodes;
    private final KubeVersion version;
    private final Clock clock;
    private final ObjectStore.Watch watch;
    private final Thread thread;

    private LocalKubelet(ObjectStore store, List<String> nodes, KubeVersion version, Clock clock) {
        this.store = store;
        this.nodes = Set.copyOf(nodes);
        this.version = version;
        this.clock = clock;
        this.watch = store.watchFromNow(List.of(Catalog.PODS, Catalog.NODES));
        this.thread = Thread.ofPlatform().daemon().name("local-kubelet").start(this::run);
    }

    /** Starts the kubelet of {@code nodes}; it stops with {@link #close}. */
    static LocalKubelet start(ObjectStore store, List<String> nodes, KubeVersion version, Clock clock) {
        return new LocalKubelet(store, nodes, version, clock);
    }

    private void run() {
        nodes.forEach(this::syncQuietly);
        try {
            while (!Thread.currentThread().isInterrupted()) {
                ObjectStore.Change first = watch.poll(60_000);
                if (first == null) {
                    continue;
                }
                Set<String> touched = new HashSet<>();
                for (ObjectStore.Change c = first; c != null; c = watch.poll(0)) {
                    touched.add(nodeOf(c));
                    if (c.previous() != null) {
                        touched.add(nodeOf(c.previous(), c.typeKey()));
                    }
                }
                touched.retainAll(nodes);
                touched.forEach(this::syncQuietly);
            }
        } catch (InterruptedException e) {
            // closed
        }
    }

    private String nodeOf(ObjectStore.Change change) {
        return change.object() == null ? "" : nodeOf(change.object(), change.typeKey());
    }

    private static String nodeOf(JsonNode object, String typeKey) {
        return typeKey.equals(ObjectStore.typeKey(Catalog.NODES))
                ? object.path("metadata").path("name").asText("")
                : object.path("spec").path("nodeName").asText("");
    }

    private void syncQuietly(String node) {
        try {
            sync(node);
        } catch (RuntimeException e) {
            LOG.warn("the local kubelet of node {} failed to sync: {}", node, e.toString());
        }
    }

    /** Admits the node's new Pods and decides its Pods' resizes. */
    private void sync(String nodeName) {
        ObjectNode node;
        try {
            node = store.get(Catalog.NODES, null, nodeName);
        } catch (ApiFront.ApiError gone) {
            return;
        }
        PodAllocation.Amounts capacity = PodAllocation.allocatable(node);
        List<ObjectNode> pods = new ArrayList<>();
        for (ObjectNode pod : store.list(Catalog.PODS, null).items()) {
            if (nodeName.equals(pod.path("spec").path("nodeName").asText())) {
                pods.add(pod);
            }
        }
        pods.sort(Comparator.comparing((ObjectNode p) ->
                        p.path("metadata").path("creationTimestamp").asText(""))
                .thenComparing(p -> p.path("metadata").path("name").asText("")));
        PodAllocation.Amounts used = PodAllocation.Amounts.ZERO;
        List<ObjectNode> running = new ArrayList<>();
        List<ObjectNode> fresh = new ArrayList<>();
        for (ObjectNode pod : pods) {
            String phase = pod.path("status").path("phase").asText("");
            if (phase.equals("Running")) {
                running.add(pod);
                used = used.plus(PodAllocation.allocated(pod));
            } else if (phase.isEmpty() && !pod.path("metadata").has("deletionTimestamp")) {
                fresh.add(pod);
            }
        }
        for (ObjectNode pod : fresh) {
            PodAllocation.Amounts requested = PodAllocation.requested(pod);
            PodAllocation.Refusal refusal = PodAllocation.admit(requested, used, capacity);
            if (refusal == null) {
                writeStatus(pod, this::running);
                used = used.plus(requested);
            } else {
                writeStatus(pod, p -> rejected(p, refusal));
            }
        }
        if (!version.podResize()) {
            return;
        }
        for (ObjectNode pod : running) {
            PodAllocation.Amounts current = PodAllocation.allocated(pod);
            if (!PodAllocation.resizeWanted(pod)) {
                writeStatus(pod, p -> pending(p, null)); // a resize given up: no longer pending
                continue;
            }
            PodAllocation.Amounts desired = PodAllocation.requested(pod);
            PodAllocation.Refusal refusal = PodAllocation.resize(desired, used.minus(current), capacity);
            if (refusal == null) {
                writeStatus(pod, this::resized);
                used = used.minus(current).plus(desired);
            } else {
                writeStatus(pod, p -> pending(p, refusal));
            }
        }
    }

    /**
     * Writes the status {@code change} makes of {@code seen}, unless the Pod changed since it was read (its next
     * change brings it back here) or is gone.
     */
    private void writeStatus(ObjectNode seen, UnaryOperator<ObjectNode> change) {
        JsonNode meta = seen.path("metadata");
        String rv = meta.path("resourceVersion").asText();
        try {
            store.update(
                    Catalog.PODS,
                    meta.path("namespace").asText(),
                    meta.path("name").asText(),
                    true,
                    current -> rv.equals(current.path("metadata")
                                    .path("resourceVersion")
                                    .asText())
                            ? change.apply(current)
                            : current,
                    false);
        } catch (ApiFront.ApiError e) {
            LOG.debug("pod {} not updated: {}", meta.path("name").asText(), e.getMessage());
        }
    }

    /** The Pod admitted: running, ready, its containers given what they request. */
    private ObjectNode running(ObjectNode pod) {
        String now = now();
        ObjectNode status = JsonNodeFactory.instance.objectNode().put("phase", "Running");
        observed(status, pod);
        ArrayNode conditions = status.putArray("conditions");
        for (String type :
                List.of("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")) {
            ObjectNode c = condition(pod, type, "True", now);
            conditions.add(c);
        }
        status.put("hostIP", "127.0.0.1");
        status.putArray("hostIPs").addObject().put("ip", "127.0.0.1");
        status.put("startTime", now);
        status.put("qosClass", PodResize.qos(pod));
        ArrayNode containers = status.putArray("containerStatuses");
        String uid = pod.path("metadata").path("uid").asText();
        for (JsonNode c : pod.path("spec").path("containers")) {
            ObjectNode s = containers.addObject();
            String name = c.path("name").asText();
            s.put("name", name)
                    .put("image", c.path("image").asText(""))
                    .put("imageID", "")
                    .put("containerID", "drover-local://" + uid + "/" + name)
                    .put("ready", true)
                    .put("started", true)
                    .put("restartCount", 0);
            s.putObject("state").putObject("running").put("startedAt", now);
            given(s, c);
        }
        pod.set("status", status);
        return pod;
    }

    /** The Pod rejected as the kubelet rejects one: failed, with the reason and message of its admission. */
    private ObjectNode rejected(ObjectNode pod, PodAllocation.Refusal refusal) {
        ObjectNode status = JsonNodeFactory.instance
                .objectNode()
                .put("phase", "Failed")
                .put("reason", refusal.reason())
                .put("message", "Pod was rejected: " + refusal.message())
                .put("startTime", now());
        observed(status, pod);
        pod.set("status", status);
        return pod;
    }

    /** The Pod resized: its containers given what they now request, no resize pending. */
    private ObjectNode resized(ObjectNode pod) {
        ObjectNode status = pod.withObjectProperty("status");
        for (JsonNode c : pod.path("spec").path("containers")) {
            if (PodAllocation.status(pod, c.path("name").asText()) instanceof ObjectNode s) {
                given(s, c);
            }
        }
        observed(status, pod);
        return pending(pod, null);
    }

    /** The Pod with condition PodResizePending for {@code refusal}, or without it when null. */
    private ObjectNode pending(ObjectNode pod, PodAllocation.Refusal refusal) {
        ObjectNode status = pod.withObjectProperty("status");
        ArrayNode conditions = status.withArrayProperty("conditions");
        ObjectNode kept = null;
        for (int i = conditions.size() - 1; i >= 0; i--) {
            JsonNode c = conditions.get(i);
            if (RESIZE_PENDING.equals(c.path("type").asText())) {
                if (refusal != null
                        && refusal.reason().equals(c.path("reason").asText())
                        && refusal.message().equals(c.path("message").asText())) {
                    kept = (ObjectNode) c;
                }
                conditions.remove(i);
            }
        }
        if (refusal != null) {
            ObjectNode c = condition(pod, RESIZE_PENDING, "True", now());
            if (kept != null) {
                c.set("lastTransitionTime", kept.get("lastTransitionTime"));
            }
            c.put("reason", refusal.reason()).put("message", refusal.message());
            conditions.add(c);
            observed(status, pod);
        }
        return pod;
    }

    /** {@code s}, a container's status, given what container {@code c} requests now. */
    private static void given(ObjectNode s, JsonNode c) {
        ObjectNode resources = PodAllocation.effectiveResources(c.path("resources"));
        ObjectNode allocated = resources.path("requests").isObject()
                ? (ObjectNode) resources.get("requests").deepCopy()
                : JsonNodeFactory.instance.objectNode();
        if (allocated.isEmpty()) {
            s.remove("allocatedResources");
        } else {
            s.set("allocatedResources", allocated);
        }
        ObjectNode actual = JsonNodeFactory.instance.objectNode();
        for (String kind : List.of("requests", "limits")) {
            ObjectNode amounts = PodAllocation.cpuMemory(resources.path(kind));
            if (!amounts.isEmpty()) {
                actual.set(kind, amounts);
            }
        }
        s.set("resources", actual);
    }

    private ObjectNode condition(ObjectNode pod, String type, String status, String now) {
        ObjectNode c = JsonNodeFactory.instance.objectNode().put("type", type).put("status", status);
        if (version.podObservedGeneration()) {
            c.put("observedGeneration", pod.path("metadata").path("generation").asLong(1));
        }
        c.putNull("lastProbeTime");
        c.put("lastTransitionTime", now);
        return c;
    }

    private ObjectNode observed(ObjectNode status, ObjectNode pod) {
        if (version.podObservedGeneration()) {
            status.put(
                    "observedGeneration",
                    pod.path("metadata").path("generation").asLong(1));
        }
        return status;
    }

    private String now() {
        return Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
    }

    @Override
    public void close() {
        thread.interrupt();
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        watch.close();
    }
}
