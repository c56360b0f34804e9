package dev.drover.node;

import dev.drover.concurrent.Worker;
import dev.drover.devices.DeviceManager;
import dev.drover.devices.HeldByPods;
import dev.drover.kube.NodeView;
import dev.drover.ratelimit.TokenBucket;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Advertises the node's devices on its Node: capacity and allocatable {@code drover.dev/<vendor>-<type>} (healthy
 * instances; 0 while their plugin is down; allocatable less those Kubernetes Pods hold, which the annotation
 * {@code drover.dev/devices-held-by-pods} names, {@link #heldByPods}) and the labels {@code drover.dev/gpu.product}, {@code .memory},
 * {@code .count} and {@code .driver}; and how clients reach the agent's API (annotations
 * {@code drover.dev/agent-api-port} and {@code drover.dev/agent-certificate-sha256}, by which clients pin its
 * certificate), and node admission's allocatable, requested and free CPU and memory ({@link #follow}) — and keeps
 * them true. It watches its own Node and, as a safety net, reads it every
 * {@code resync} (every check while the watch is down); when the Node differs from what the agent wants (a key
 * changed or removed by someone else, or a {@code drover.dev/} key it does not set) it reads the Node again (an
 * event may be stale) and writes its fields back with one merge patch of {@code nodes/status}, removing the
 * foreign {@code drover.dev/} keys. Keys without that prefix are never touched. Setting back what someone else
 * changed is bounded to {@link #RESTORES_PER_MINUTE} a minute, so two writers fighting cannot make it hammer the
 * API server; each is logged at WARN. A failed read or write is tried again at the next check.
 */
public final class NodeRegistrar implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeRegistrar.class);
    static final int RESTORES_PER_MINUTE = 3;
    /** How often the Node is read while the watch is open. */
    static final Duration RESYNC = Duration.ofMinutes(1);
    /** How long changing annotations ({@link #follow}) wait after a nudge: changes that come together cost one write. */
    static final Duration NUDGE_GAP = Duration.ofSeconds(2);

    private final KubernetesClient client;
    private final String node;
    private final DeviceManager devices;
    private final Duration interval;
    private final long resync;
    private final LongSupplier nanoTime;
    private volatile Map<String, String> annotations;
    /** Annotations that change as the agent works, read at each turn; and what the last turn read. */
    private volatile Supplier<Map<String, String>> live = Map::of;

    private volatile Map<String, String> liveSeen = Map.of();
    /** Which instances Kubernetes Pods hold, read at each turn (no call: the last view). */
    private volatile HeldByPods podsHold = HeldByPods.NONE;

    private final Semaphore nudges = new Semaphore(0);
    private final TokenBucket restores;
    private final NodeWatch watch;
    private final Worker worker;

    /** The fields last known to be on the Node (written, or found there); null before the first. */
    private NodeFields onNode;

    private long lastRead;
    /** The last read or write failed, or none was done yet: read at the next check. */
    private boolean readDue = true;
    /** Someone else's change waits for the restore bound. */
    private boolean heldBack;

    private boolean missingSaid;

    public NodeRegistrar(KubernetesClient client, String node, DeviceManager devices, Duration interval) {
        this(client, node, devices, Map.of(), interval);
    }

    /**
     * @param devices     the node's devices, or null when the agent runs no device plugins
     * @param annotations set on the Node as well (how clients reach the agent's API)
     * @param interval    how often the device view is checked (and the Node read while its watch is down)
     */
    public NodeRegistrar(
            KubernetesClient client,
            String node,
            DeviceManager devices,
            Map<String, String> annotations,
            Duration interval) {
        this(client, node, devices, annotations, interval, RESYNC, System::nanoTime);
    }

    NodeRegistrar(
            KubernetesClient client,
            String node,
            DeviceManager devices,
            Map<String, String> annotations,
            Duration interval,
            Duration resync,
            LongSupplier nanoTime) {
        this.client = client;
        this.node = node;
        this.devices = devices;
        this.annotations = Map.copyOf(annotations);
        this.interval = interval;
        this.resync = resync.toNanos();
        this.nanoTime = nanoTime;
        this.restores = new TokenBucket(RESTORES_PER_MINUTE / 60.0, RESTORES_PER_MINUTE, nanoTime.getAsLong());
        this.watch = new NodeWatch(client, node, this::seen, nanoTime);
        this.worker = Worker.startVirtual("drover-node-registrar", self -> turn());
    }

    private void turn() throws InterruptedException {
        liveSeen = Map.copyOf(live.get());
        if (due()) {
            check();
        }
        watch.openIfDue();
        if (nudges.tryAcquire(Math.max(1_000_000, nextWait()), TimeUnit.NANOSECONDS)) {
            nudges.drainPermits();
            Thread.sleep(NUDGE_GAP); // what changes meanwhile is written with it: one write per gap at most
        }
    }

    /**
     * Keeps the annotations {@code changing} gives on the Node as well: read when {@link #nudge nudged} (written
     * {@link #NUDGE_GAP} later, so a burst of changes costs one write) and at each check.
     */
    public void follow(Supplier<Map<String, String>> changing) {
        live = changing;
        nudge();
    }

    /** Shows which instances Pods hold ({@link HeldByPods#last}); {@link #nudge} it when they change. */
    public void heldByPods(HeldByPods pods) {
        podsHold = pods;
        nudge();
    }

    /** What {@link #follow} gives changed: written within {@link #NUDGE_GAP}. Never blocks. */
    public void nudge() {
        if (nudges.availablePermits() == 0) {
            nudges.release();
        }
    }

    /** Sets {@code changed} annotations (a renewed certificate's fingerprint) and writes them now. */
    public void annotate(Map<String, String> changed) {
        Map<String, String> merged = new LinkedHashMap<>(annotations);
        merged.putAll(changed);
        annotations = Map.copyOf(merged);
        check();
    }

    private NodeFields wanted() {
        Map<String, String> all = annotations;
        Map<String, String> changing = liveSeen;
        if (!changing.isEmpty()) {
            all = new LinkedHashMap<>(all);
            all.putAll(changing);
        }
        return NodeFields.of(devices == null ? null : devices.devices(), podsHold.last(), all);
    }

    private synchronized boolean due() {
        long now = nanoTime.getAsLong();
        return readDue
                || !wanted().equals(onNode)
                || !watch.isOpen()
                || now - lastRead >= resync
                || (heldBack && restores.nanosUntilToken(now) == 0);
    }

    private synchronized long nextWait() {
        long wait = Math.min(interval.toNanos(), watch.nanosUntilRetry());
        return heldBack ? Math.min(wait, restores.nanosUntilToken(nanoTime.getAsLong())) : wait;
    }

    /** A watch event: a Node that differs from what the agent wants is read again (it may be stale) and set back. */
    void seen(NodeView event) {
        if (!NodeDrift.between(event, wanted()).none()) {
            check();
        }
    }

    /** Reads the Node and writes the agent's fields back if it differs; returns whether it wrote. */
    synchronized boolean check() {
        NodeFields wanted = wanted();
        long now = nanoTime.getAsLong();
        boolean restore = wanted.equals(onNode); // the agent's own view is unchanged: someone else changed the Node
        if (restore && heldBack && restores.nanosUntilToken(now) > 0) {
            return false; // the bound holds it back: no read for each of the other writer's changes
        }
        lastRead = now;
        readDue = true;
        NodeView found;
        try {
            found = NodeView.read(client, node);
        } catch (RuntimeException e) {
            LOG.warn("cannot read node {} (will retry): {}", node, e.getMessage());
            return false;
        }
        if (found == null) {
            if (!missingSaid) {
                LOG.warn("node {} is not found; its fields are written once it is there", node);
                missingSaid = true;
            }
            return false;
        }
        missingSaid = false;
        NodeDrift drift = NodeDrift.between(found, wanted);
        if (drift.none()) {
            onNode = wanted;
            readDue = false;
            heldBack = false;
            return false;
        }
        if (restore && !restores.tryTake(now)) {
            if (!heldBack) {
                LOG.warn(
                        "node {} was changed again; not set back for {} s ({} restores a minute at most): {}",
                        node,
                        Math.ceilDiv(restores.nanosUntilToken(now), 1_000_000_000L),
                        RESTORES_PER_MINUTE,
                        drift.describe());
            }
            heldBack = true;
            readDue = false;
            return false;
        }
        try {
            NodeView.resource(client, node)
                    .subresource("status")
                    .patch(PatchContext.of(PatchType.JSON_MERGE), drift.patch());
        } catch (RuntimeException e) {
            LOG.warn("cannot register node {} (will retry): {}", node, e.getMessage());
            return false;
        }
        onNode = wanted;
        readDue = false;
        heldBack = false;
        if (restore) {
            LOG.warn("node {}: set back what someone else changed: {}", node, drift.describe());
        } else {
            LOG.info("registered node {}: {}", node, drift.describe());
        }
        return true;
    }

    NodeWatch watch() {
        return watch;
    }

    @Override
    public void close() {
        worker.close();
        watch.close();
    }
}
