package dev.drover.sharing;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeAdmission;
import dev.drover.admission.NodeCapacity;
import dev.drover.admission.PodRequests;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code nodeSharing: dedicated}: what allocations may request together is the Node's allocatable less what the Pods
 * bound to the node request (DaemonSets and the agent's own Pod included), counted as kube-scheduler counts them
 * ({@link PodRequests}), and never more than the agent's own allocatable (its setting, or the machine's less the
 * reserve), which caps Drover whatever the Pods leave. Pods are watched with a field
 * selector on {@code spec.nodeName}, the Node by name; each change sets the admission's allocatable anew. Admitted
 * allocations keep their shares when Pods come: kube-scheduler does not see them, which is why such nodes are tainted
 * for Drover. A Node that reports no allocatable cpu and memory (no kubelet runs there) leaves the agent's own.
 */
public final class DedicatedNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DedicatedNode.class);
    private static final Duration FIRST_LIST = Duration.ofMinutes(2);

    private final String nodeName;
    private final NodeAdmission admission;
    private final CpuMemory configured;
    private final Runnable changed;
    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<Node> node;
    private CpuMemory last;

    private DedicatedNode(
            KubernetesClient client, String nodeName, NodeAdmission admission, CpuMemory configured, Runnable changed) {
        this.nodeName = nodeName;
        this.admission = admission;
        this.configured = configured;
        this.changed = changed;
        this.pods = client.pods()
                .inAnyNamespace()
                .withField("spec.nodeName", nodeName)
                .runnableInformer(0);
        this.node = client.nodes().withName(nodeName).runnableInformer(0);
    }

    /**
     * Lists the node's Pods and its Node, sets the admission's allocatable from them, and follows their changes.
     *
     * @param configured the agent's own allocatable (its setting, or the machine's less the reserve): the most
     *                   allocations may have, whatever the Node says
     * @param changed    told after each change of the allocatable (it must not block)
     * @throws IllegalStateException in one sentence when the Pods cannot be listed (RBAC: the chart grants list and
     *                               watch on pods in this mode only)
     */
    public static DedicatedNode start(
            KubernetesClient client, String nodeName, NodeAdmission admission, CpuMemory configured, Runnable changed)
            throws InterruptedException {
        DedicatedNode d = new DedicatedNode(client, nodeName, admission, configured, changed);
        try {
            d.follow();
        } catch (RuntimeException | InterruptedException e) {
            d.close();
            throw e;
        }
        return d;
    }

    private void follow() throws InterruptedException {
        ResourceEventHandler<Object> recount = new ResourceEventHandler<>() {
            @Override
            public void onAdd(Object o) {
                recount();
            }

            @Override
            public void onUpdate(Object before, Object after) {
                recount();
            }

            @Override
            public void onDelete(Object o, boolean unknownFinalState) {
                recount();
            }
        };
        @SuppressWarnings({"unchecked", "rawtypes"})
        ResourceEventHandler<Pod> onPods = (ResourceEventHandler) recount;
        @SuppressWarnings({"unchecked", "rawtypes"})
        ResourceEventHandler<Node> onNode = (ResourceEventHandler) recount;
        // a first list that fails stops there (a refusal is told, not retried for ever); later errors are retried
        pods.exceptionHandler((started, t) -> started);
        node.exceptionHandler((started, t) -> started);
        pods.addEventHandler(onPods);
        node.addEventHandler(onNode);
        synced(node, "its Node");
        synced(pods, "the Pods bound to it");
        recount();
    }

    private void synced(SharedIndexInformer<?> informer, String what) throws InterruptedException {
        try {
            informer.start().toCompletableFuture().get(FIRST_LIST.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException(
                    "nodeSharing dedicated: the agent of node " + nodeName + " cannot list " + what + ": "
                            + reason(e.getCause())
                            + " (the chart grants list and watch on pods and nodes in this mode)",
                    e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("nodeSharing dedicated: the agent of node " + nodeName + " could not list "
                    + what + " within " + FIRST_LIST.toMinutes() + " minutes");
        }
    }

    private static String reason(Throwable t) {
        if (t instanceof KubernetesClientException k && k.getCode() > 0) {
            return "HTTP " + k.getCode()
                    + (k.getStatus() == null ? "" : ", " + k.getStatus().getMessage());
        }
        return String.valueOf(t);
    }

    /** Sets the admission's allocatable from what the Node and its Pods say now. */
    private synchronized void recount() {
        Optional<CpuMemory> nodeAllocatable;
        PodRequests.Total held;
        try {
            nodeAllocatable = node.getStore().list().stream()
                    .filter(n -> n.getMetadata() != null
                            && nodeName.equals(n.getMetadata().getName()))
                    .findFirst()
                    .flatMap(n -> NodeCapacity.ofNode(
                            n.getStatus() == null ? null : n.getStatus().getAllocatable()));
            held = PodRequests.of(List.copyOf(pods.getStore().list()));
        } catch (IllegalArgumentException e) {
            LOG.warn("nodeSharing dedicated: keeping the allocatable as it was: {}", e.getMessage());
            return;
        }
        CpuMemory now = allocatable(configured, nodeAllocatable, held.cpuMemory());
        if (now.equals(last)) {
            return;
        }
        last = now;
        admission.allocatable(now);
        LOG.info(
                "allocations may request {} millicores of CPU and {} MB of memory: the node's {} less {} requested by"
                        + " its {} Pod(s)",
                now.cpuMillis(),
                now.memoryMB(),
                nodeAllocatable
                        .map(a -> a.cpuMillis() + "m and " + a.memoryMB() + " MB")
                        .orElse("(none reported)"),
                held.cpuMemory().cpuMillis() + "m and " + held.cpuMemory().memoryMB() + " MB",
                held.count());
        changed.run();
    }

    /**
     * What the Pods leave of the Node's allocatable, at most the agent's own (a cap an operator may set below the
     * node), never below zero; where the Node reports none (no kubelet), the agent's own less the Pods'.
     */
    static CpuMemory allocatable(CpuMemory configured, Optional<CpuMemory> node, CpuMemory pods) {
        CpuMemory left = node.orElse(configured).minus(pods);
        return new CpuMemory(
                Math.max(0, Math.min(configured.cpuMillis(), left.cpuMillis())),
                Math.max(0, Math.min(configured.memoryMB(), left.memoryMB())));
    }

    @Override
    public void close() {
        pods.close();
        node.close();
    }
}
