package dev.drover.deviceplugin.nvidia;

import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.ChangeSignal;
import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.DevicePlugin;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.deviceplugin.PluginClock;
import dev.drover.deviceplugin.PluginInfo;
import dev.drover.deviceplugin.Reservation;
import dev.drover.deviceplugin.nvidia.GpuInventory.Gpu;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NVIDIA GPUs through NVML: one group per model and attributes (vendor {@code nvidia}, type {@code gpu}),
 * MIG devices as devices of their own, health from XID and ECC events, stats from NVML queries. Without
 * the library or a loaded driver it reports no devices and says why.
 */
public final class NvidiaDevicePlugin implements DevicePlugin {

    public static final String NAME = "nvidia";
    static final String VENDOR = "nvidia";
    static final String TYPE = "gpu";
    private static final Logger LOG = LoggerFactory.getLogger(NvidiaDevicePlugin.class);
    private static final long MIB = 1024L * 1024L;

    private final PluginClock clock;
    private final ChangeSignal changes;
    /** NVML calls hold the read lock; shutdown takes the write lock so it never runs under a call. */
    private final ReentrantReadWriteLock nvmlLock = new ReentrantReadWriteLock();

    private final AtomicReference<GpuInventory.Scan> lastScan = new AtomicReference<>();
    private volatile boolean closed;
    private String unavailable;
    private volatile Nvml nvml;
    private volatile GpuInventory inventory;
    private volatile XidHealth health;
    private volatile Optional<XidWatcher> watcher = Optional.empty();

    public NvidiaDevicePlugin(PluginClock clock) {
        this.clock = clock;
        this.changes = new ChangeSignal(clock);
    }

    @Override
    public PluginInfo info() {
        return new PluginInfo(NAME, "1");
    }

    @Override
    public synchronized void configure(Map<String, Object> config) throws DevicePluginException {
        if (nvml != null || unavailable != null) {
            throw new DevicePluginException("device plugin nvidia is already configured");
        }
        NvidiaConfig cfg = NvidiaConfig.read(NAME, config);
        Nvml lib;
        try {
            lib = Nvml.load(cfg.library());
            lib.init();
        } catch (NvmlException e) {
            unavailable = "no NVIDIA GPUs: " + e.getMessage();
            LOG.warn("device plugin nvidia: {}", unavailable);
            return;
        }
        try {
            GpuInventory inv = new GpuInventory(lib, cfg.gpus());
            GpuInventory.Scan scan = inv.scan();
            if (!scan.unmatched().isEmpty()) {
                LOG.warn(
                        "device plugin nvidia: {} name no GPU of this host (nvidia-smi -L lists them); ignored",
                        scan.unmatched());
            }
            lastScan.set(scan);
            health = new XidHealth(cfg.applicationXids(), cfg.quietPeriod());
            inventory = inv;
            nvml = lib;
            watcher = XidWatcher.start(lib, scan.physical(), cfg.eventPollInterval(), this::onEvent);
            LOG.info(
                    "device plugin nvidia: {} device(s){}, driver {}",
                    scan.gpus().size(),
                    cfg.gpus().managesAll() ? "" : " managed (devices, excludeDevices)",
                    lib.driverVersion());
        } catch (NvmlException | RuntimeException e) {
            nvml = null;
            try {
                lib.shutdown();
            } catch (NvmlException ignored) {
                // the original failure is the one worth reporting
            }
            throw new DevicePluginException("device plugin nvidia: " + e.getMessage(), e);
        }
    }

    /** Why there are no devices, when NVML could not be used; empty when it works. */
    public synchronized Optional<String> unavailableReason() {
        return Optional.ofNullable(unavailable);
    }

    /** Whether the event thread runs (false when no GPU supports events or after close). */
    boolean watchingEvents() {
        return watcher.map(XidWatcher::running).orElse(false);
    }

    @Override
    public Fingerprint fingerprint() throws DevicePluginException {
        Optional<String> reason = unavailableReason();
        if (reason.isPresent()) {
            return Fingerprint.unavailable(reason.get());
        }
        GpuInventory.Scan scan = withNvml(() -> inventory.scan());
        lastScan.set(scan);
        Instant now = clock.now();
        Map<GroupKey, List<DeviceInstance>> groups = new LinkedHashMap<>();
        for (Gpu gpu : scan.gpus()) {
            XidHealth.Health h = health.healthAt(gpu.uuid(), now);
            Optional<DeviceInstance.GpuSlot> slot = Optional.of(
                    new DeviceInstance.GpuSlot(gpu.index(), gpu.parentUuid().orElse(gpu.uuid()), gpu.gpuInstanceId()));
            DeviceInstance instance = gpu.lost().isPresent()
                    ? new DeviceInstance(gpu.uuid(), false, gpu.lost().get(), gpu.pciBusId(), slot)
                    : new DeviceInstance(gpu.uuid(), h.healthy(), h.description(), gpu.pciBusId(), slot);
            groups.computeIfAbsent(new GroupKey(gpu.model(), gpu.attributes()), k -> new ArrayList<>())
                    .add(instance);
        }
        List<DeviceGroup> out = new ArrayList<>();
        groups.forEach((k, v) -> out.add(new DeviceGroup(VENDOR, TYPE, k.model, k.attributes, v)));
        return Fingerprint.of(out);
    }

    private record GroupKey(String model, SortedMap<String, AttributeValue> attributes) {}

    @Override
    public Fingerprint awaitChange(Fingerprint since, Duration timeout)
            throws DevicePluginException, InterruptedException {
        // Woken by an event, by the next GPU's quiet period ending, or by the deadline.
        return changes.awaitChange(
                since,
                timeout,
                () -> {
                    if (closed) {
                        throw new DevicePluginException("device plugin nvidia is closed");
                    }
                    return fingerprint();
                },
                t -> health == null ? Optional.empty() : health.nextRecovery(t));
    }

    @Override
    public List<InstanceStats> stats() throws DevicePluginException {
        if (unavailableReason().isPresent()) {
            return List.of();
        }
        return withNvml(() -> {
            List<InstanceStats> out = new ArrayList<>();
            Instant now = clock.now();
            for (Gpu gpu : inventory.scan().gpus()) {
                if (gpu.lost().isPresent()) {
                    continue;
                }
                try {
                    out.add(stats(gpu, now));
                } catch (NvmlException e) {
                    if (!e.gpuLost()) throw e;
                }
            }
            return out;
        });
    }

    private InstanceStats stats(Gpu gpu, Instant now) throws NvmlException {
        InstanceStats.Builder b = InstanceStats.builder(gpu.uuid(), now);
        var handle = gpu.handle();
        nvml.utilization(handle).ifPresent(u -> b.gpuUtilPercent(u.gpuPercent()).memUtilPercent(u.memoryPercent()));
        nvml.memory(handle).ifPresent(m -> b.memoryUsedMiB(m.usedBytes() / MIB).memoryTotalMiB(m.totalBytes() / MIB));
        nvml.temperatureC(handle).ifPresent(b::temperatureC);
        nvml.powerUsageMilliwatts(handle).ifPresent(mw -> b.powerW(mw / 1000.0));
        nvml.totalEccErrors(handle, NvmlLayouts.ECC_CORRECTED).ifPresent(b::eccErrorsCorrected);
        nvml.totalEccErrors(handle, NvmlLayouts.ECC_UNCORRECTED).ifPresent(b::eccErrorsUncorrected);
        nvml.clockMHz(handle, NvmlLayouts.CLOCK_SM).ifPresent(b::smClockMHz);
        nvml.clockMHz(handle, NvmlLayouts.CLOCK_MEM).ifPresent(b::memoryClockMHz);
        return b.build();
    }

    @Override
    public Reservation reserve(List<String> instanceIds) throws DevicePluginException {
        Set<String> known = new LinkedHashSet<>();
        if (unavailableReason().isEmpty()) {
            withNvml(() -> inventory.scan()).gpus().forEach(g -> known.add(g.uuid()));
        }
        Set<String> wanted = new LinkedHashSet<>(instanceIds);
        Set<String> unknown = new LinkedHashSet<>(wanted);
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            throw new DevicePluginException("device plugin nvidia: cannot reserve " + unknown
                    + ": no such GPU managed on this host (managed: " + known + ")");
        }
        return NvidiaReservations.withCdi(List.copyOf(wanted));
    }

    /** Called on the event thread. */
    private void onEvent(Nvml.Event event) {
        GpuInventory.Scan scan = lastScan.get();
        Optional<GpuInventory.Physical> gpu = scan.physical().stream()
                .filter(p -> p.handle().address() == event.device().address())
                .findFirst();
        if (gpu.isEmpty()) {
            LOG.warn("nvidia: event type {} for a GPU not seen at the last scan; ignored", event.type());
            return;
        }
        List<String> affected = affected(scan, gpu.get(), event.gpuInstanceId());
        Instant now = clock.now();
        boolean critical = false;
        if ((event.type() & NvmlLayouts.EVENT_XID_CRITICAL) != 0) {
            for (String uuid : affected) {
                critical |= health.recordXid(uuid, event.xid(), now);
            }
            if (critical) {
                LOG.warn("nvidia: XID {} on {}: unhealthy until quiet", event.xid(), affected);
            } else {
                LOG.info("nvidia: XID {} on {} is an application error; health unchanged", event.xid(), affected);
            }
        } else if ((event.type() & NvmlLayouts.EVENT_DOUBLE_BIT_ECC) != 0) {
            affected.forEach(uuid -> health.recordDoubleBitEcc(uuid, now));
            critical = true;
            LOG.warn("nvidia: double-bit ECC error on {}: unhealthy until quiet", affected);
        }
        if (critical) {
            changes.signal();
        }
    }

    /** The offered devices an event on a whole GPU concerns: the GPU, or its MIG devices (one when the
     *  event names its GPU instance). */
    private static List<String> affected(GpuInventory.Scan scan, GpuInventory.Physical gpu, int gpuInstanceId) {
        if (!gpu.mig()) {
            return List.of(gpu.uuid());
        }
        List<Gpu> children = scan.gpus().stream()
                .filter(g -> g.parentUuid().equals(Optional.of(gpu.uuid())))
                .toList();
        List<String> exact = children.stream()
                .filter(g -> gpuInstanceId != NvmlLayouts.NO_GPU_INSTANCE
                        && g.gpuInstanceId().isPresent()
                        && g.gpuInstanceId().getAsInt() == gpuInstanceId)
                .map(Gpu::uuid)
                .toList();
        if (!exact.isEmpty()) return exact;
        return children.isEmpty()
                ? List.of(gpu.uuid())
                : children.stream().map(Gpu::uuid).toList();
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) return;
            closed = true;
        }
        changes.signal();
        watcher.ifPresent(XidWatcher::close);
        if (nvml == null) return;
        try {
            // A call stuck in the driver must not make close() hang too.
            if (nvmlLock.writeLock().tryLock(5, TimeUnit.SECONDS)) {
                try {
                    nvml.shutdown();
                } finally {
                    nvmlLock.writeLock().unlock();
                }
            } else {
                LOG.error("device plugin nvidia: an NVML call did not return; skipping nvmlShutdown");
            }
        } catch (NvmlException e) {
            LOG.warn("device plugin nvidia: {}", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private interface NvmlCall<T> {
        T call() throws NvmlException;
    }

    private <T> T withNvml(NvmlCall<T> call) throws DevicePluginException {
        nvmlLock.readLock().lock();
        try {
            if (closed) throw new DevicePluginException("device plugin nvidia is closed");
            if (nvml == null) throw new DevicePluginException("device plugin nvidia is not configured");
            return call.call();
        } catch (NvmlException e) {
            throw new DevicePluginException("device plugin nvidia: " + e.getMessage(), e);
        } finally {
            nvmlLock.readLock().unlock();
        }
    }
}
