package dev.drover.controller.services;

import dev.drover.common.Backoff;
import dev.drover.common.UserText;
import dev.drover.concurrent.Worker;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this node's EndpointSlices in step with the endpoints its allocations publish into Kubernetes Services
 * ({@code spec.services}). The agent tells it what each allocation publishes now ({@link #publish}: a replace, an
 * empty list when it stopped or is gone); one background thread writes, never the caller's.
 *
 * <p>One slice per Service, port name and host port on this node ({@link SliceKey}), shaped by {@link SliceShapes}.
 * A change marks its slices due after {@link Timing#coalesce()}, so a burst of changes is one write per slice; a
 * slice is written only when what it would hold differs from what was last written, and deleted when no endpoint is
 * left in it, its Service is gone, or the Service has no port for it. A failed write is tried again after a back-off
 * from {@link Timing#firstRetry()} to {@link Timing#longestRetry()}. Every {@link Timing#recheck()} the Services of
 * every slice are read again: a Service that appeared gets its slices, one deleted loses them (its owner reference
 * lets Kubernetes' garbage collector delete them first), a changed one has them follow. Once the agent knows its
 * allocations ({@link #allocationsKnown()}), the node's slices that none of them claims (left by an earlier run) are
 * deleted. Thread-safe; {@link #close()} stops the thread.
 */
public final class EndpointSlicePublisher implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(EndpointSlicePublisher.class);

    /** The most endpoints one allocation may publish: each is a port of it in a Service. */
    public static final int MAX_ENDPOINTS_PER_ALLOCATION = 256;

    /**
     * The publisher's pace.
     *
     * @param coalesce how long a change waits for others before its slices are written
     * @param recheck how often the Services are read again
     * @param firstRetry the first pause after a failed write
     * @param longestRetry the longest pause between retries
     */
    public record Timing(Duration coalesce, Duration recheck, Duration firstRetry, Duration longestRetry) {
        public static final Timing DEFAULT = new Timing(
                Duration.ofMillis(200), Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofMinutes(2));

        public Timing {
            Backoff.from(firstRetry, longestRetry); // checks them
            if (coalesce.isNegative() || !recheck.isPositive()) {
                throw new IllegalArgumentException(
                        "coalescing must not be negative and rechecks need a positive interval, not " + coalesce
                                + " and " + recheck);
            }
        }
    }

    private final SliceWrites api;
    private final String node;
    private final String address;
    private final String addressType;
    private final Timing timing;
    private final LongSupplier nanoTime;

    // guarded by this
    private final Map<String, Published> published = new HashMap<>();
    private final Map<SliceKey, Long> due = new HashMap<>();
    private boolean cleanupWanted;
    private boolean cleanedUp;
    private long cleanupAt;
    private long recheckAt;
    private Backoff cleanupBackoff;

    // the worker's own
    private final Map<SliceKey, SliceWrites.Written> written = new HashMap<>();
    private final Map<SliceKey, Backoff> backoffs = new HashMap<>();
    private final Map<String, Optional<Service>> services = new HashMap<>();
    private final Set<SliceKey> refused = new HashSet<>();
    private final Set<SliceKey> capped = new HashSet<>();

    private final Worker worker;

    private record Published(AllocationRef allocation, List<ServiceEndpoint> endpoints) {}

    private EndpointSlicePublisher(
            KubernetesClient client, String node, String address, Timing timing, LongSupplier nanoTime) {
        if (node == null || node.isEmpty() || node.length() > 253) {
            throw new IllegalArgumentException("the node's name must have 1 to 253 characters");
        }
        InetAddress ip;
        try {
            ip = InetAddress.ofLiteral(address);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException(
                    "the address of node " + node + " for its Services' endpoints must be an IP address, not "
                            + UserText.quote(address),
                    e);
        }
        this.api = new SliceWrites(client);
        this.node = node;
        this.address = ip.getHostAddress();
        this.addressType = ip instanceof Inet4Address ? "IPv4" : "IPv6";
        this.timing = timing;
        this.nanoTime = nanoTime;
        this.recheckAt = nanoTime.getAsLong() + timing.recheck().toNanos();
        this.cleanupBackoff = Backoff.from(timing.firstRetry(), timing.longestRetry());
        this.worker = Worker.startVirtual("endpoint-slices", w -> turn());
    }

    /**
     * Starts publishing the endpoints of node {@code node}'s allocations, open on its {@code address} (an IPv4 or
     * IPv6 literal: the slices' address type follows it), through {@code client}.
     */
    public static EndpointSlicePublisher start(
            KubernetesClient client, String node, String address, Timing timing, LongSupplier nanoTime) {
        return new EndpointSlicePublisher(client, node, address, timing, nanoTime);
    }

    /**
     * Allocation {@code allocation} now has {@code endpoints} (none: it stopped or is gone). Returns at once; the
     * slices follow after {@link Timing#coalesce()}.
     */
    public void publish(AllocationRef allocation, List<ServiceEndpoint> endpoints) {
        if (endpoints.size() > MAX_ENDPOINTS_PER_ALLOCATION) {
            throw new IllegalArgumentException("allocation " + allocation + " publishes " + endpoints.size()
                    + " endpoints; at most " + MAX_ENDPOINTS_PER_ALLOCATION);
        }
        Published now = new Published(allocation, List.copyOf(new LinkedHashSet<>(endpoints)));
        String id = allocation.namespace() + "/" + allocation.name();
        synchronized (this) {
            Published before = endpoints.isEmpty() ? published.remove(id) : published.put(id, now);
            if (now.equals(before) || (before == null && endpoints.isEmpty())) {
                return;
            }
            long at = nanoTime.getAsLong() + timing.coalesce().toNanos();
            for (Published p : before == null ? List.of(now) : List.of(before, now)) {
                for (ServiceEndpoint e : p.endpoints()) {
                    due.putIfAbsent(key(p.allocation(), e), at);
                }
            }
            notifyAll();
        }
    }

    /**
     * The agent has told every allocation it has: the node's slices that none of them claims are deleted (once,
     * retried until it succeeds).
     */
    public synchronized void allocationsKnown() {
        if (!cleanupWanted) {
            cleanupWanted = true;
            cleanupAt = nanoTime.getAsLong();
            notifyAll();
        }
    }

    @Override
    public void close() {
        worker.close();
    }

    private static SliceKey key(AllocationRef a, ServiceEndpoint e) {
        return new SliceKey(a.namespace(), e.service(), e.portName(), e.hostPort());
    }

    /** What one turn does, taken under the lock. */
    private record Work(Map<SliceKey, List<SliceShapes.Member>> slices, boolean cleanup, Set<String> claimed) {}

    private void turn() throws InterruptedException {
        Work work = next();
        if (work.cleanup()) {
            cleanUp(work.claimed());
        }
        for (var e : work.slices().entrySet()) {
            if (worker.closed()) {
                return;
            }
            sync(e.getKey(), e.getValue());
        }
    }

    private synchronized Work next() throws InterruptedException {
        while (true) {
            long now = nanoTime.getAsLong();
            boolean cleanup = cleanupWanted && !cleanedUp && now - cleanupAt >= 0;
            boolean recheck = now - recheckAt >= 0;
            if (recheck) {
                recheckAt = now + timing.recheck().toNanos();
                services.clear();
                for (SliceKey k : written.keySet()) {
                    due.putIfAbsent(k, now);
                }
                for (Published p : published.values()) {
                    for (ServiceEndpoint e : p.endpoints()) {
                        due.putIfAbsent(key(p.allocation(), e), now);
                    }
                }
            }
            List<SliceKey> ready = due.entrySet().stream()
                    .filter(e -> now - e.getValue() >= 0)
                    .map(Map.Entry::getKey)
                    .toList();
            if (cleanup || !ready.isEmpty()) {
                Map<SliceKey, List<SliceShapes.Member>> slices = new HashMap<>();
                for (SliceKey k : ready) {
                    due.remove(k);
                    slices.put(k, new ArrayList<>());
                }
                Set<String> claimed = new HashSet<>();
                for (Published p : published.values()) {
                    for (ServiceEndpoint e : p.endpoints()) {
                        SliceKey k = key(p.allocation(), e);
                        claimed.add(k.namespace() + "/" + k.sliceName(node));
                        List<SliceShapes.Member> members = slices.get(k);
                        if (members != null) {
                            members.add(new SliceShapes.Member(p.allocation(), e));
                        }
                    }
                }
                return new Work(slices, cleanup, claimed);
            }
            long wait = recheckAt - now;
            for (long at : due.values()) {
                wait = Math.min(wait, at - now);
            }
            if (cleanupWanted && !cleanedUp) {
                wait = Math.min(wait, cleanupAt - now);
            }
            // wait(0) would wait for ever
            wait(Math.max(1, Duration.ofNanos(wait).toMillis()));
        }
    }

    private void sync(SliceKey key, List<SliceShapes.Member> members) {
        try {
            write(key, members);
            backoffs.remove(key);
        } catch (RuntimeException e) {
            Backoff b = backoffs.getOrDefault(key, Backoff.from(timing.firstRetry(), timing.longestRetry()));
            backoffs.put(key, b.next());
            LOG.warn(
                    "writing the endpoint slice of service {}/{} (port {}) failed; again in {} ms: {}",
                    key.namespace(),
                    key.service(),
                    key.portName(),
                    b.current().toMillis(),
                    e.getMessage());
            synchronized (this) {
                due.merge(key, nanoTime.getAsLong() + b.current().toNanos(), Math::min);
            }
        }
    }

    private void write(SliceKey key, List<SliceShapes.Member> members) {
        SliceWrites.Written last = written.get(key);
        if (members.isEmpty()) {
            remove(key, last, null);
            return;
        }
        Optional<Service> service = services.computeIfAbsent(
                key.namespace() + "/" + key.service(), k -> api.service(key.namespace(), key.service()));
        if (service.isEmpty()) {
            remove(key, last, "service " + key.namespace() + "/" + key.service() + " does not exist (yet)");
            return;
        }
        List<ServicePort> ports = SliceShapes.servicePorts(service.get(), key.portName());
        if (ports.isEmpty()) {
            remove(
                    key,
                    last,
                    "service " + key.namespace() + "/" + key.service() + " has no port for port "
                            + key.portName() + ": name a Service port " + key.portName()
                            + " or give one the targetPort " + key.portName());
            return;
        }
        if (members.size() > SliceShapes.MAX_ENDPOINTS && capped.add(key)) {
            LOG.warn(
                    "{} allocations publish port {} at host port {} into service {}/{}; its slice holds the first {}",
                    members.size(),
                    key.portName(),
                    key.hostPort(),
                    key.namespace(),
                    key.service(),
                    SliceShapes.MAX_ENDPOINTS);
        }
        EndpointSlice slice = SliceShapes.slice(key, members, service.get(), ports, node, address, addressType);
        if (last != null && slice.equals(last.content())) {
            return;
        }
        written.put(key, api.write(slice, last == null ? null : last.resourceVersion()));
        refused.remove(key);
    }

    /** Deletes the slice of {@code key} if this agent has it, saying {@code why} once when there is a reason. */
    private void remove(SliceKey key, SliceWrites.Written last, String why) {
        if (why != null && refused.add(key)) {
            LOG.warn("no endpoint slice for host port {}: {}", key.hostPort(), why);
        }
        if (last != null) {
            api.delete(key.namespace(), last.name());
            written.remove(key);
        }
    }

    private void cleanUp(Set<String> claimed) {
        List<EndpointSlice> own;
        try {
            own = api.listOwn(
                    Map.of(SliceShapes.MANAGED_BY, SliceShapes.MANAGER, SliceShapes.NODE, SliceKey.nodeLabel(node)));
            int deleted = 0;
            for (EndpointSlice s : own) {
                String ns = s.getMetadata().getNamespace();
                String name = s.getMetadata().getName();
                boolean ours = s.getEndpoints() == null
                        || s.getEndpoints().stream().map(Endpoint::getNodeName).allMatch(node::equals);
                if (ours && !claimed.contains(ns + "/" + name)) {
                    api.delete(ns, name);
                    deleted++;
                }
            }
            LOG.info(
                    "endpoint slices of node {}: {} found, {} no allocation claims deleted", node, own.size(), deleted);
        } catch (RuntimeException e) {
            synchronized (this) {
                cleanupAt = nanoTime.getAsLong() + cleanupBackoff.current().toNanos();
                cleanupBackoff = cleanupBackoff.next();
            }
            LOG.warn("listing the endpoint slices of node {} failed; again later: {}", node, e.getMessage());
            return;
        }
        synchronized (this) {
            cleanedUp = true;
        }
    }
}
