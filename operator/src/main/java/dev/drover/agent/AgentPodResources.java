package dev.drover.agent;

import dev.drover.devices.DeviceLedger;
import dev.drover.devices.DeviceManager;
import dev.drover.devices.HeldByPods;
import dev.drover.devices.PodHeldDevices;
import dev.drover.node.NodeRegistrar;
import dev.drover.podresources.PodDevices;
import dev.drover.podresources.PodResourcesClient;
import dev.drover.podresources.PodResourcesException;
import java.time.Duration;
import java.util.List;

/**
 * The agent's side of sharing devices with Kubernetes Pods (issue 42): where device plugins run, the kubelet's
 * PodResources API ({@code podResourcesSocket}) is read so that the devices Pods hold are never reserved, and the
 * Node shows them. Kept apart from {@link Agent}'s wiring, which it adds two lines to.
 */
final class AgentPodResources {

    /** The most connecting to the kubelet and its answer take together. */
    static final Duration DEADLINE = Duration.ofSeconds(5);

    private AgentPodResources() {}

    /** Starts reading the kubelet's API for {@code devices}; closed with the agent's last closeables. */
    static HeldByPods start(AgentConfig config, DeviceManager devices, List<AutoCloseable> closeLast) {
        PodResourcesClient client = new PodResourcesClient(config.podResourcesSocket(), DEADLINE);
        PodHeldDevices held = PodHeldDevices.start(
                config.podResourcesSocket(),
                new PodHeldDevices.Lister() {
                    @Override
                    public List<PodDevices> list() throws PodResourcesException, InterruptedException {
                        return client.list();
                    }

                    @Override
                    public void close() {
                        client.close();
                    }
                },
                devices,
                PodHeldDevices.Timing.DEFAULT);
        closeLast.add(held);
        return held;
    }

    /**
     * The Node shows what Pods hold, written when it changes; each change is checked for instances an allocation
     * holds too. Nothing to do without device plugins ({@code ledger} null).
     */
    static void follow(DeviceLedger ledger, NodeRegistrar registrar) {
        if (ledger == null) {
            return;
        }
        HeldByPods pods = ledger.heldByPods();
        pods.onChange(view -> {
            ledger.conflicts(view);
            registrar.nudge();
        });
        registrar.heldByPods(pods);
    }
}
