package dev.drover.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.Resources;
import dev.drover.local.AgentIdentity;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code --node-sharing resize|dedicated}: the cluster and agent for it, what each task asks, and what it reports.
 * The API server has a node of {@value #NODE_ALLOCATABLE} and, for {@code resize}, acts as Kubernetes 1.35 (whose
 * kubelet stand-in answers {@code pods/resize}); the agent runs as its DaemonSet Pod (the one the API server made for its token) with the mode
 * given, and may admit that much itself, so the node and the kubelet decide, not the machine the bench runs on. Every
 * task asks {@value #TASK_CPU_MILLIS}m and {@value #TASK_MEMORY_MB} MB, so under {@code resize} every admission waits
 * for a resize of the agent's Pod that includes it.
 */
final class NodeSharingLoad {

    static final String KUBE_VERSION = "1.35";
    /** {@code dedicated}'s: the chart, rendered for 1.35, grants the agent its Pod's resize, not the node's Pods. */
    static final String DEDICATED_KUBE_VERSION = "1.32";

    static final String NODE_ALLOCATABLE = "cpu=64,memory=256Gi";
    static final int TASK_CPU_MILLIS = 10;
    static final int TASK_MEMORY_MB = 16;

    private NodeSharingLoad() {}

    /** The API server's flags: its version ({@link BenchOptions#kubeVersion}), and with {@code --node-sharing} its node. */
    static List<String> serverFlags(BenchOptions options) {
        List<String> flags = new ArrayList<>(List.of("--kube-version", options.kubeVersion()));
        if (options.nodeSharing() != null) {
            flags.addAll(List.of("--node-allocatable", NODE_ALLOCATABLE));
        }
        return flags;
    }

    /**
     * The agent's flags: its mode, its Pod on {@code node} (as the chart's POD_NAME and POD_NAMESPACE name it), and
     * the node's allocatable as its own. Without {@code --node-sharing}, the agent chooses as under the chart's
     * DaemonSet: from Kubernetes 1.35 it knows its Pod and chooses resize (the chart, rendered for 1.35, grants it no
     * list of the node's Pods for dedicated); before, no flags, and it chooses dedicated.
     */
    static List<String> agentFlags(BenchOptions options, KubernetesClient admin, String node) {
        if (options.nodeSharing() == null) {
            if (Integer.parseInt(options.kubeVersion().substring(2)) < 35) {
                return List.of();
            }
            Pod pod = agentPod(admin, node);
            return List.of(
                    "--pod-name",
                    pod.getMetadata().getName(),
                    "--pod-namespace",
                    pod.getMetadata().getNamespace());
        }
        Pod pod = agentPod(admin, node);
        return List.of(
                "--node-sharing",
                options.nodeSharing(),
                "--pod-name",
                pod.getMetadata().getName(),
                "--pod-namespace",
                pod.getMetadata().getNamespace(),
                "--allocatable-cpu-millis",
                "64000",
                "--allocatable-memory-mb",
                Integer.toString(256 * 1024));
    }

    private static Pod agentPod(KubernetesClient admin, String node) {
        return admin.pods().inNamespace(AgentIdentity.NAMESPACE).list().getItems().stream()
                .filter(p -> node.equals(p.getSpec().getNodeName()))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException(
                        "the local API server made no agent Pod on node " + node + " in " + AgentIdentity.NAMESPACE));
    }

    /** What each task asks: nothing without {@code --node-sharing}. */
    static Resources taskResources(BenchOptions options) {
        if (options.nodeSharing() == null) {
            return null;
        }
        Resources r = new Resources();
        r.setCpuMillis(TASK_CPU_MILLIS);
        r.setMemoryMB(TASK_MEMORY_MB);
        return r;
    }

    /**
     * With {@code --node-sharing}: the mode; per allocation, from its create call returning to the agent taking it
     * on (its first task {@code Received}, written once it was admitted, its resize answered under {@code resize},
     * and given a start slot), as percentiles; and the resizes of the agent's Pod
     * ({@code drover_reservation_resizes_total}, every outcome), in all and per 100 allocations.
     */
    static void put(
            ObjectNode result,
            BenchOptions options,
            String metrics,
            List<Allocation> listed,
            Map<String, Long> created,
            long begin,
            Instant beginWall) {
        if (options.nodeSharing() == null) {
            return;
        }
        List<Double> takenOn = new ArrayList<>();
        for (Allocation a : listed) {
            Long at = created.get(a.getMetadata().getName());
            Timeline.Span span = Timeline.Span.of(a);
            if (at != null && span.received() != null) {
                Instant createdAt = beginWall.plusNanos(at - begin);
                takenOn.add(Duration.between(createdAt, span.received()).toNanos() / 1e9);
            }
        }
        takenOn.sort(Double::compare);
        long resizes = (long) AgentProbe.sum(metrics, "drover_reservation_resizes_total\\{[^}]*\\}");
        result.put("nodeSharing", options.nodeSharing());
        result.put("createToTakenOnP50Seconds", Bench.round(Timeline.percentile(takenOn, 0.50)));
        result.put("createToTakenOnP99Seconds", Bench.round(Timeline.percentile(takenOn, 0.99)));
        result.put("reservationResizes", resizes);
        result.put("resizesPer100Allocations", Bench.round(resizes * 100.0 / options.allocs()));
    }
}
