package dev.drover.sharing;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeCapacity;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.PodResource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The agent's own Pod, whose {@code reservation} container's cpu and memory requests are resized in place, and what
 * the kubelet answers: accepted (the container's allocated requests are the new ones, or the kubelet has seen the
 * Pod's generation and left no {@code PodResizePending}), or refused (a {@code PodResizePending} condition of that
 * generation, reason {@code Deferred} or {@code Infeasible}, message the kubelet's).
 */
final class PodResize implements Resizer {

    /** The DaemonSet Pod's container that carries Drover's admitted requests (docs/install.md, "Sharing a node with Pods"). */
    static final String CONTAINER = "reservation";

    static final String RESIZE_PENDING = "PodResizePending";
    static final String DEFERRED = Resizer.DEFERRED;
    static final String RESIZE_FAILED = Resizer.RESIZE_FAILED;

    private final PodResource pod;
    private final String name;
    private final int index;
    private final Resizer.Timing timing;
    private final CpuMemory allocated;

    private PodResize(PodResource pod, String name, int index, Resizer.Timing timing, CpuMemory allocated) {
        this.pod = pod;
        this.name = name;
        this.index = index;
        this.timing = timing;
        this.allocated = allocated;
    }

    /** The agent's Pod and where its reservation container is in it; an IllegalStateException when it has none. */
    static PodResize find(KubernetesClient client, String namespace, String name, Resizer.Timing timing) {
        PodResource resource = client.pods().inNamespace(namespace).withName(name);
        Pod p;
        try {
            p = resource.get();
        } catch (KubernetesClientException e) {
            throw new IllegalStateException(
                    "nodeSharing resize: the agent cannot read its Pod " + namespace + "/" + name + ": HTTP "
                            + e.getCode() + " (the chart grants get on pods in this mode)",
                    e);
        }
        if (p == null) {
            throw new IllegalStateException("nodeSharing resize: the agent's Pod " + namespace + "/" + name
                    + " does not exist (POD_NAME and POD_NAMESPACE name it)");
        }
        List<Container> containers = p.getSpec().getContainers();
        for (int i = 0; i < containers.size(); i++) {
            if (CONTAINER.equals(containers.get(i).getName())) {
                return new PodResize(
                        resource,
                        namespace + "/" + name,
                        i,
                        timing,
                        allocatedOf(p).orElse(CpuMemory.ZERO));
            }
        }
        throw new IllegalStateException("nodeSharing resize: the agent's Pod " + namespace + "/" + name
                + " has no container named " + CONTAINER + " to book allocations on (the chart's DaemonSet has one)");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public CpuMemory allocated() {
        return allocated;
    }

    @Override
    public Resizer.Answer resize(CpuMemory target) throws InterruptedException {
        String path = "/spec/containers/" + index;
        String patch = "[{\"op\":\"test\",\"path\":\"" + path + "/name\",\"value\":\"" + CONTAINER + "\"},"
                + "{\"op\":\"replace\",\"path\":\"" + path + "/resources\",\"value\":{\"requests\":{\"cpu\":\""
                + target.cpuMillis() + "m\",\"memory\":\"" + target.memoryMB() + "Mi\"}}}]";
        long generation;
        try {
            Pod resized = pod.subresource("resize").patch(PatchContext.of(PatchType.JSON), patch);
            Long g = resized.getMetadata().getGeneration();
            generation = g == null ? 0 : g;
        } catch (KubernetesClientException e) {
            return new Resizer.Answer(
                    false,
                    RESIZE_FAILED,
                    "the resize of " + name + " failed: HTTP " + e.getCode() + ", "
                            + (e.getStatus() == null
                                    ? e.getMessage()
                                    : e.getStatus().getMessage()));
        }
        long deadline = System.nanoTime() + timing.answerWithin().toNanos();
        Duration pause = timing.firstPoll();
        while (true) {
            Thread.sleep(pause);
            Optional<Resizer.Answer> answer;
            try {
                Pod p = pod.get();
                answer = p == null
                        ? Optional.of(new Resizer.Answer(false, RESIZE_FAILED, "the Pod " + name + " is gone"))
                        : answer(p, target, generation);
            } catch (KubernetesClientException e) {
                answer = Optional.empty(); // read again; the deadline bounds it
            }
            if (answer.isPresent()) {
                return answer.get();
            }
            if (System.nanoTime() - deadline >= 0) {
                return new Resizer.Answer(
                        false,
                        RESIZE_FAILED,
                        "the kubelet did not answer the resize of " + name + " within "
                                + timing.answerWithin().toSeconds() + "s");
            }
            pause = pause.multipliedBy(2).compareTo(timing.maxPoll()) > 0 ? timing.maxPoll() : pause.multipliedBy(2);
        }
    }

    /** What {@code p} says of the resize to {@code target} made at {@code generation}; empty while unanswered. */
    static Optional<Resizer.Answer> answer(Pod p, CpuMemory target, long generation) {
        if (allocatedOf(p).filter(target::equals).isPresent()) {
            return Optional.of(Resizer.Answer.ACCEPTED);
        }
        PodCondition pending = p.getStatus() == null || p.getStatus().getConditions() == null
                ? null
                : p.getStatus().getConditions().stream()
                        .filter(c -> RESIZE_PENDING.equals(c.getType()) && "True".equals(c.getStatus()))
                        .findFirst()
                        .orElse(null);
        if (pending != null
                && (pending.getObservedGeneration() == null || pending.getObservedGeneration() >= generation)) {
            return Optional.of(new Resizer.Answer(
                    false,
                    pending.getReason() == null ? DEFERRED : pending.getReason(),
                    pending.getMessage() == null ? "" : pending.getMessage()));
        }
        Long seen = p.getStatus() == null ? null : p.getStatus().getObservedGeneration();
        if (generation > 0 && seen != null && seen >= generation && pending == null) {
            return Optional.of(Resizer.Answer.ACCEPTED); // the kubelet saw it and left nothing pending: allocated
        }
        return Optional.empty();
    }

    /** The reservation container's allocated requests, where the kubelet reports them. */
    static Optional<CpuMemory> allocatedOf(Pod p) {
        if (p.getStatus() == null || p.getStatus().getContainerStatuses() == null) {
            return Optional.empty();
        }
        for (ContainerStatus s : p.getStatus().getContainerStatuses()) {
            if (CONTAINER.equals(s.getName())) {
                Map<String, Quantity> allocated = s.getAllocatedResources();
                try {
                    return NodeCapacity.ofNode(allocated);
                } catch (IllegalArgumentException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }
}
