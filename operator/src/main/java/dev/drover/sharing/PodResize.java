package dev.drover.sharing;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeCapacity;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
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

    /** Pods, named so that the client asks the API server nothing to find them (no discovery). */
    private static final ResourceDefinitionContext PODS = new ResourceDefinitionContext.Builder()
            .withVersion("v1")
            .withKind("Pod")
            .withPlural("pods")
            .withNamespaced(true)
            .build();

    private final Resource<GenericKubernetesResource> pod;
    private final KubernetesSerialization serialization;
    private final String name;
    private final int index;
    private final Resizer.Timing timing;
    private final CpuMemory allocated;

    private PodResize(
            Resource<GenericKubernetesResource> pod,
            KubernetesSerialization serialization,
            String name,
            int index,
            Resizer.Timing timing,
            CpuMemory allocated) {
        this.pod = pod;
        this.serialization = serialization;
        this.name = name;
        this.index = index;
        this.timing = timing;
        this.allocated = allocated;
    }

    /** The agent's Pod and where its reservation container is in it; an IllegalStateException when it has none. */
    static PodResize find(KubernetesClient client, String namespace, String name, Resizer.Timing timing) {
        Resource<GenericKubernetesResource> resource =
                client.genericKubernetesResources(PODS).inNamespace(namespace).withName(name);
        KubernetesSerialization serialization = client.getKubernetesSerialization();
        ResizedPod p;
        try {
            p = read(serialization, resource.get());
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
        List<ResizedPod.Container> containers = p.containers();
        for (int i = 0; i < containers.size(); i++) {
            if (CONTAINER.equals(containers.get(i).name())) {
                return new PodResize(
                        resource,
                        serialization,
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
            GenericKubernetesResource resized = pod.subresource("resize").patch(PatchContext.of(PatchType.JSON), patch);
            Long g =
                    resized.getMetadata() == null ? null : resized.getMetadata().getGeneration();
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
                ResizedPod p = read(serialization, pod.get());
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
    static Optional<Resizer.Answer> answer(ResizedPod p, CpuMemory target, long generation) {
        if (allocatedOf(p).filter(target::equals).isPresent()) {
            return Optional.of(Resizer.Answer.ACCEPTED);
        }
        ResizedPod.Condition pending = p.conditions().stream()
                .filter(c -> RESIZE_PENDING.equals(c.type()) && "True".equals(c.status()))
                .findFirst()
                .orElse(null);
        if (pending != null && (pending.observedGeneration() == null || pending.observedGeneration() >= generation)) {
            return Optional.of(new Resizer.Answer(
                    false,
                    pending.reason() == null ? DEFERRED : pending.reason(),
                    pending.message() == null ? "" : pending.message()));
        }
        Long seen = p.status() == null ? null : p.status().observedGeneration();
        if (generation > 0 && seen != null && seen >= generation && pending == null) {
            return Optional.of(Resizer.Answer.ACCEPTED); // the kubelet saw it and left nothing pending: allocated
        }
        return Optional.empty();
    }

    /** The reservation container's allocated requests, where the kubelet reports them. */
    static Optional<CpuMemory> allocatedOf(ResizedPod p) {
        for (ResizedPod.ContainerStatus s : p.containerStatuses()) {
            if (CONTAINER.equals(s.name())) {
                Map<String, Quantity> allocated = s.allocatedResources();
                try {
                    return NodeCapacity.ofNode(allocated);
                } catch (IllegalArgumentException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /** The fields of {@code generic} that a resize needs; null for a Pod that is gone. */
    static ResizedPod read(KubernetesSerialization serialization, GenericKubernetesResource generic) {
        return generic == null ? null : serialization.convertValue(generic, ResizedPod.class);
    }
}
