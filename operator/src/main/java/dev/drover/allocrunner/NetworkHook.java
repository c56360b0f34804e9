package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.NetworkMode;
import dev.drover.api.v1alpha1.NetworkStatus;
import dev.drover.api.v1alpha1.Port;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.common.UserText;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One allocation's network ({@link AllocNetwork}): its host ports from admission, and for {@code none} and
 * {@code bridge} its network namespace, set up by the agent's {@link NetworkSetup} before the first task starts (a
 * task prestart hook, so an allocation that never starts a task, one restored over, never makes one), kept in the
 * state store, checked again after an agent restart, and torn down once every task is dead for good and on destroy.
 * Each start of a task joins it ({@link dev.drover.driver.TaskAttachments#networkNamespace}) and gets its ports'
 * variables, under any the task sets itself. A failed set-up fails the start with a {@code SetupFailure} naming the
 * plugin's error.
 */
final class NetworkHook implements AllocHooks.Prerun, AllocHooks.Postrun, AllocHooks.Destroy, TaskPrestartHook {

    private static final Logger LOG = LoggerFactory.getLogger(NetworkHook.class);

    /** Stored for an allocation whose network was torn down: nothing to tear down again. */
    private static final String TORN_DOWN = "";

    private final NetworkSetup setup;
    private final AllocId id;
    private final StateDB state;
    private final Consumer<AllocNetwork> published;
    /** Read by probes without the lock: a set-up under way (seconds) never holds a probe slot. */
    private volatile AllocNetwork network;
    /** What the store holds of the network set up; null or {@link #TORN_DOWN} when none is. */
    private String stored;

    NetworkHook(NetworkSetup setup, AllocId id, StateDB state, Consumer<AllocNetwork> published) {
        this.setup = setup;
        this.id = id;
        this.state = state;
        this.published = published;
    }

    @Override
    public String name() {
        return "network";
    }

    /** The host network, or after a restart the network set up before it, checked to be whole. */
    @Override
    public boolean prerun(AllocHookContext ctx) {
        AllocationSpec spec = ctx.alloc().get().getSpec();
        List<NetworkStatus.PortStatus> ports = ports(spec);
        synchronized (this) {
            if (spec.effectiveNetworkMode() == NetworkMode.HOST) {
                publish(new AllocNetwork(NetworkMode.HOST, null, setup.nodeAddress(), setup.nodeAddress(), ports));
                return true;
            }
            stored = state.getNetwork(id).orElse(null);
            if (stored == null || stored.equals(TORN_DOWN)) {
                return true;
            }
            try {
                NetworkSetup.Attached a = setup.reattach(id, stored);
                publish(new AllocNetwork(
                        spec.effectiveNetworkMode(), a.namespace(), a.ip(), setup.nodeAddress(), ports));
            } catch (Exception e) {
                ctx.warnings()
                        .warn(
                                "NetworkLost",
                                "The allocation's network is not whole after the agent restarted ("
                                        + UserText.cutEscaped(String.valueOf(e.getMessage()), 300)
                                        + "); it is set up again at the next task start");
                tearDown();
            }
        }
        return true;
    }

    /** Sets up the network at the first start, then lends it to every start of a task. */
    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        AllocNetwork n = ensure(ctx.spec());
        if (n.namespace() != null) {
            ctx.attachments().networkNamespace(n.namespace());
        }
        n.env().forEach(ctx.env()::putIfAbsent);
    }

    private synchronized AllocNetwork ensure(AllocationSpec spec) throws TaskHookException {
        if (network != null) {
            return network;
        }
        List<NetworkStatus.PortStatus> ports = ports(spec);
        NetworkMode mode = spec.effectiveNetworkMode();
        NetworkSetup.Attached a;
        try {
            a = setup.setUp(id, mode, ports);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TaskHookException(TaskEventType.SetupFailure, "interrupted while setting up the network");
        } catch (Exception e) {
            throw new TaskHookException(
                    TaskEventType.SetupFailure,
                    "cannot set up the allocation's " + mode.apiName() + " network: "
                            + UserText.cutEscaped(String.valueOf(e.getMessage()), 500),
                    e);
        }
        stored = a.stored();
        state.putNetwork(id, stored);
        publish(new AllocNetwork(mode, a.namespace(), a.ip(), setup.nodeAddress(), ports));
        return network;
    }

    /** Every task is dead for good: nothing will join the namespace again. */
    @Override
    public void postrun(AllocHookContext ctx) {
        synchronized (this) {
            tearDown();
        }
    }

    @Override
    public void destroy(AllocHookContext ctx) {
        synchronized (this) {
            if (stored == null) {
                stored = state.getNetwork(id).orElse(null); // a runner destroyed before its prerun ran
            }
            tearDown();
        }
    }

    /** Where a check naming port {@code name} connects now; empty when the allocation has no such port (yet). */
    Optional<InetSocketAddress> checkAddress(String name) {
        AllocNetwork n = network;
        return n == null ? Optional.empty() : n.checkAddress(name);
    }

    private void tearDown() {
        if (stored != null && !stored.equals(TORN_DOWN)) {
            setup.tearDown(id, stored);
            stored = TORN_DOWN;
            state.putNetwork(id, TORN_DOWN);
            LOG.debug("allocation {}: network torn down", id);
        }
        if (network != null && network.mode() != NetworkMode.HOST) {
            publish(new AllocNetwork(network.mode(), null, null, network.nodeAddress(), network.ports()));
            network = null;
        }
    }

    private void publish(AllocNetwork n) {
        network = n.namespace() == null && n.mode() != NetworkMode.HOST ? null : n;
        published.accept(n);
    }

    /** The allocation's ports with the host ports admission gave them; the bridge maps each to its {@code to}. */
    private List<NetworkStatus.PortStatus> ports(AllocationSpec spec) {
        Map<String, Integer> host = setup.hostPorts(id);
        boolean bridge = spec.effectiveNetworkMode() == NetworkMode.BRIDGE;
        List<NetworkStatus.PortStatus> out = new ArrayList<>();
        for (Port p : spec.ports()) {
            Integer hostPort = Optional.ofNullable(host.get(p.getName())).orElse(p.getStatic());
            if (hostPort == null) {
                continue; // not admitted with ports (an agent before ports were kept): it has none
            }
            out.add(new NetworkStatus.PortStatus(
                    p.getName(), hostPort, bridge && p.getTo() != null ? p.getTo() : hostPort));
        }
        return out;
    }
}
