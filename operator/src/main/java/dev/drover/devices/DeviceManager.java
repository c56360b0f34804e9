package dev.drover.devices;

import dev.drover.common.Backoff;
import dev.drover.concurrent.Worker;
import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.DevicePlugin;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.FingerprintValidator;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.deviceplugin.Reservation;
import dev.drover.driver.Deadlines;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the agent's device plugins: one virtual thread per plugin keeps its
 * fingerprint current and restarts it with back-off when it fails, hangs or
 * reports an invalid fingerprint (rejected whole); another polls its stats.
 * While a plugin is down its devices stay listed, as unhealthy. Devices are
 * indexed by instance ID, so looking up a task's devices costs O(its devices);
 * the index is replaced whole on each change, so a reader never sees a plugin's
 * devices half re-published.
 */
public final class DeviceManager implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceManager.class);

    /** Timing of the plugin loops. */
    public record Timing(
            Duration call, Duration changeWait, Duration statsInterval, Duration minBackoff, Duration maxBackoff) {
        public static final Timing DEFAULT = new Timing(
                Duration.ofSeconds(30),
                Duration.ofSeconds(30),
                Duration.ofSeconds(10),
                Duration.ofSeconds(1),
                Duration.ofMinutes(2));
    }

    /** One instance as the agent knows it: its group, its health now, and the plugin that owns it. */
    public record Device(String plugin, DeviceGroup group, DeviceInstance instance, boolean healthy, String health) {}

    private final class Runner {
        final DevicePlugins.Selection selection;
        final String name;
        volatile DevicePlugin plugin;
        volatile List<DeviceGroup> groups = List.of();
        volatile String downReason;
        /** Fingerprint thread only: the wait before the next restart, and whether a first fingerprint was told. */
        Backoff backoff = Backoff.from(timing.minBackoff(), timing.maxBackoff());

        boolean first = true;
        Worker fingerprints;
        Worker stats;

        Runner(DevicePlugins.Selection selection) {
            this.selection = selection;
            this.name = selection.factory().name();
        }
    }

    private final Timing timing;
    private final List<Runner> runners = new ArrayList<>();
    /** Immutable; replaced whole under this manager's lock. */
    private volatile Map<String, Device> index = Map.of();

    private final Map<String, InstanceStats> stats = new ConcurrentHashMap<>();
    private final Semaphore firstFingerprints = new Semaphore(0);

    /** Starts every selected plugin; returns at once. */
    public DeviceManager(List<DevicePlugins.Selection> plugins, Timing timing) {
        this.timing = timing;
        for (DevicePlugins.Selection s : plugins) {
            Runner r = new Runner(s);
            runners.add(r);
            r.fingerprints = Worker.startVirtual("device-plugin-" + r.name, self -> runPlugin(r, self));
            r.stats = Worker.startVirtual("device-stats-" + r.name, self -> pollStats(r));
        }
    }

    /** Waits until every plugin reported a first fingerprint (or failed once), at most {@code timeout}. */
    public boolean awaitFirstFingerprints(Duration timeout) throws InterruptedException {
        return firstFingerprints.tryAcquire(runners.size(), timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Starts the plugin and keeps its fingerprint current until it fails; then waits its back-off. */
    private void runPlugin(Runner r, Worker self) throws InterruptedException {
        try {
            DevicePlugin plugin = r.selection.factory().create();
            r.plugin = plugin;
            plugin.configure(r.selection.config());
            Fingerprint fp = Deadlines.call("fingerprinting with " + r.name, timing.call(), plugin::fingerprint);
            while (!self.closed()) {
                publish(r, FingerprintValidator.validate(r.name, fp));
                if (r.first) {
                    r.first = false;
                    firstFingerprints.release();
                }
                r.backoff = r.backoff.reset();
                Fingerprint since = fp;
                fp = Deadlines.call(
                        "waiting for a change from " + r.name,
                        timing.changeWait().plus(timing.call()),
                        () -> plugin.awaitChange(since, timing.changeWait()));
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            if (self.closed()) {
                return;
            }
            String why = e instanceof ExecutionException ee && ee.getCause() != null
                    ? ee.getCause().getMessage()
                    : e.getMessage();
            markDown(r, "device plugin " + r.name + " failed: " + why);
            if (r.first) {
                r.first = false;
                firstFingerprints.release();
            }
            LOG.warn(
                    "device plugin {} failed, restarting it in {} ms: {}",
                    r.name,
                    r.backoff.current().toMillis(),
                    why);
            closePlugin(r);
            Thread.sleep(r.backoff.current());
            r.backoff = r.backoff.next();
        }
    }

    private void pollStats(Runner r) throws InterruptedException {
        try {
            Thread.sleep(r.groups.isEmpty() ? timing.minBackoff() : timing.statsInterval());
            DevicePlugin plugin = r.plugin;
            if (plugin == null || r.downReason != null) {
                return;
            }
            List<InstanceStats> read = Deadlines.call("reading stats from " + r.name, timing.call(), plugin::stats);
            synchronized (this) { // not between a fingerprint's index and its clean-up of stats
                for (InstanceStats s : read) {
                    if (index.containsKey(s.id())) {
                        stats.put(s.id(), s);
                    }
                }
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            LOG.debug("device plugin {}: stats failed: {}", r.name, e.toString());
        }
    }

    private synchronized void publish(Runner r, Fingerprint fp) {
        r.downReason = null;
        if (fp.unavailableReason().isPresent()
                && (r.groups.isEmpty() || fp.groups().isEmpty())) {
            LOG.info(
                    "device plugin {}: no devices: {}",
                    r.name,
                    fp.unavailableReason().get());
        }
        Map<String, Device> next = new HashMap<>(index);
        next.values().removeIf(d -> d.plugin().equals(r.name));
        for (DeviceGroup g : fp.groups()) {
            for (DeviceInstance i : g.instances()) {
                next.put(i.id(), new Device(r.name, g, i, i.healthy(), i.healthDescription()));
            }
        }
        index = Map.copyOf(next);
        r.groups = fp.groups();
        stats.keySet().retainAll(next.keySet());
    }

    /** The plugin is down: its devices stay, unhealthy, with the reason. */
    private synchronized void markDown(Runner r, String reason) {
        r.downReason = reason;
        Map<String, Device> next = new HashMap<>(index);
        for (DeviceGroup g : r.groups) {
            for (DeviceInstance i : g.instances()) {
                next.put(i.id(), new Device(r.name, g, i, false, reason));
            }
        }
        index = Map.copyOf(next);
    }

    private static void closePlugin(Runner r) {
        DevicePlugin p = r.plugin;
        r.plugin = null;
        if (p != null) {
            try {
                p.close();
            } catch (RuntimeException e) {
                LOG.debug("closing device plugin {}: {}", r.name, e.toString());
            }
        }
    }

    /** Every known device instance, by ID. */
    public Map<String, Device> devices() {
        return index;
    }

    public Optional<Device> device(String instanceId) {
        return Optional.ofNullable(index.get(instanceId));
    }

    /** The newest stats of one instance; O(1). */
    public Optional<InstanceStats> stats(String instanceId) {
        return Optional.ofNullable(stats.get(instanceId));
    }

    /** Healthy instances matching {@code request} ({@code type}, {@code vendor/type} or {@code vendor/type/model}). */
    public List<Device> healthyMatching(String request) {
        List<Device> out = new ArrayList<>();
        for (Device d : index.values()) {
            if (d.healthy() && matches(d.group(), request)) {
                out.add(d);
            }
        }
        out.sort(java.util.Comparator.comparing(d -> d.instance().id()));
        return out;
    }

    static boolean matches(DeviceGroup g, String request) {
        return dev.drover.admission.Device.matches(g.vendor(), g.type(), g.model(), request);
    }

    /** What a task gets for {@code ids} (environment, mounts, device nodes, CDI names), from their plugin(s). */
    public Reservation reserve(Collection<String> ids) throws DevicePluginException, InterruptedException {
        Map<String, List<String>> byPlugin = new LinkedHashMap<>();
        Map<String, Device> devices = index; // one snapshot for the whole reservation
        for (String id : ids) {
            Device d = devices.get(id);
            if (d == null) {
                throw new DevicePluginException("device instance " + id + " is not known on this node");
            }
            byPlugin.computeIfAbsent(d.plugin(), k -> new ArrayList<>()).add(id);
        }
        Map<String, String> env = new LinkedHashMap<>();
        List<Reservation.Mount> mounts = new ArrayList<>();
        List<Reservation.DeviceNode> nodes = new ArrayList<>();
        List<String> cdi = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : byPlugin.entrySet()) {
            Runner r = runners.stream()
                    .filter(x -> x.name.equals(e.getKey()))
                    .findFirst()
                    .orElseThrow();
            DevicePlugin plugin = r.plugin;
            if (plugin == null) {
                throw new DevicePluginException("device plugin " + r.name + " is down: " + r.downReason);
            }
            Reservation res;
            try {
                res = Deadlines.call(
                        "reserving devices with " + r.name, timing.call(), () -> plugin.reserve(e.getValue()));
            } catch (ExecutionException ex) {
                throw new DevicePluginException(
                        ex.getCause() != null ? ex.getCause().getMessage() : ex.getMessage());
            } catch (Deadlines.DeadlineExceeded ex) {
                throw new DevicePluginException(ex.getMessage());
            }
            env.putAll(res.env());
            mounts.addAll(res.mounts());
            nodes.addAll(res.deviceNodes());
            cdi.addAll(res.cdiDevices());
        }
        return new Reservation(env, mounts, nodes, cdi);
    }

    /** Stops every plugin loop and joins its threads; closes the plugins. */
    @Override
    public void close() {
        List<Worker> workers = new ArrayList<>();
        for (Runner r : runners) {
            workers.add(r.fingerprints);
            workers.add(r.stats);
        }
        if (!Worker.closeAll(workers)) {
            return; // a thread may still use its plugin
        }
        for (Runner r : runners) {
            closePlugin(r);
        }
    }
}
