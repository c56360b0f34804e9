package dev.drover.agent;

import dev.drover.admission.NodeAdmission;
import dev.drover.controller.Admissions;
import dev.drover.sharing.DedicatedNode;
import dev.drover.sharing.NodeSharing;
import dev.drover.sharing.PodReservation;
import dev.drover.sharing.ReservationMetrics;
import dev.drover.sharing.Resizer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.VersionInfo;
import io.prometheus.client.CollectorRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts what keeps allocations and the kubelet's Pods from booking the same CPU and memory, as {@code nodeSharing}
 * says or, unset, as the API server's version allows ({@link NodeSharing#chosen}).
 */
final class AgentNodeSharing {

    private static final Logger LOG = LoggerFactory.getLogger(AgentNodeSharing.class);

    private AgentNodeSharing() {}

    /** Starts the mode's watcher or booking; what it returns is closed when the agent stops. */
    static AutoCloseable start(
            AgentConfig config,
            KubernetesClient client,
            NodeAdmission admission,
            Admissions admissions,
            Runnable changed,
            CollectorRegistry metrics)
            throws InterruptedException {
        NodeSharingSettings s = config.nodeSharing();
        NodeSharing mode = s.mode().orElseGet(() -> NodeSharing.chosen(s.pod().isPresent(), serverMinor(client)));
        LOG.info("nodeSharing {}{}", mode, s.mode().isPresent() ? "" : " (chosen by the API server's version)");
        if (mode == NodeSharing.RESIZE) {
            PodReservation reservation;
            try {
                reservation = PodReservation.start(
                        client, s.podNamespace().orElseThrow(), s.podName().orElseThrow(), Resizer.Timing.DEFAULT);
            } catch (IllegalStateException e) {
                if (s.mode().isPresent()) {
                    throw e; // asked for: it is that or nothing
                }
                LOG.warn("{}; nodeSharing dedicated instead", e.getMessage());
                return DedicatedNode.start(client, config.nodeName(), admission, config.allocatable(), changed);
            }
            admissions.bookWith(reservation);
            new ReservationMetrics(reservation).register(metrics);
            return reservation;
        }
        return DedicatedNode.start(client, config.nodeName(), admission, config.allocatable(), changed);
    }

    /** The API server's minor version ({@code 35}, or {@code 35+} as some providers write it); -1 when unknown. */
    static int serverMinor(KubernetesClient client) {
        try {
            VersionInfo v = client.getKubernetesVersion();
            String minor = v == null || v.getMinor() == null ? "" : v.getMinor().replaceAll("[^0-9].*$", "");
            return minor.isEmpty() || minor.length() > 4 ? -1 : Integer.parseInt(minor);
        } catch (KubernetesClientException e) {
            LOG.warn("the API server's version could not be read ({}); nodeSharing dedicated", e.getMessage());
            return -1;
        }
    }
}
