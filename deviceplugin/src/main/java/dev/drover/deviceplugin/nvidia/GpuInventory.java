package dev.drover.deviceplugin.nvidia;

import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.Unit;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The GPUs NVML sees: whole GPUs, or, for a GPU in MIG mode, its MIG devices instead (each its own device
 * with its own UUID; the parent is not offered, as its memory is split among them). What does not change
 * while a GPU is present (name, attributes, PCI bus ID) is read once per UUID, so a GPU that falls off the
 * bus keeps its place in its group while it is reported lost. Only the GPUs the {@link GpuSelection} manages are
 * listed; a whole GPU is kept for events when it or one of its MIG devices is.
 */
final class GpuInventory {

    static final String MEMORY = "memory";
    static final String POWER_LIMIT = "power_limit";
    static final String CORES_CLOCK = "cores_clock";
    static final String MEMORY_CLOCK = "memory_clock";
    static final String COMPUTE_CAPABILITY = "compute_capability";
    static final String DRIVER_VERSION = "driver_version";
    static final String CUDA_VERSION = "cuda_version";

    private static final long MIB = 1024L * 1024L;

    /** One offered device. {@code lost} says why it cannot be used (e.g. it fell off the bus). */
    record Gpu(
            String uuid,
            MemorySegment handle,
            String model,
            SortedMap<String, AttributeValue> attributes,
            Optional<String> pciBusId,
            Optional<String> lost,
            Optional<String> parentUuid,
            OptionalInt gpuInstanceId,
            int index) {}

    /** A whole GPU, where NVML delivers events. */
    record Physical(String uuid, MemorySegment handle, boolean mig) {}

    /** {@code unmatched}: entries of the selection that named no GPU of this host. */
    record Scan(List<Gpu> gpus, List<Physical> physical, List<String> unmatched) {
        Scan {
            gpus = List.copyOf(gpus);
            physical = List.copyOf(physical);
            unmatched = List.copyOf(unmatched);
        }
    }

    private record Static(
            String model,
            SortedMap<String, AttributeValue> attributes,
            Optional<String> pciBusId,
            OptionalInt gpuInstanceId) {}

    private final Nvml nvml;
    private final GpuSelection selection;
    private final String driverVersion;
    private final Optional<String> cudaVersion;
    private final Map<String, Static> known = new ConcurrentHashMap<>();

    GpuInventory(Nvml nvml, GpuSelection selection) throws NvmlException {
        this.nvml = nvml;
        this.selection = selection;
        this.driverVersion = nvml.driverVersion();
        this.cudaVersion = nvml.cudaDriverVersion();
    }

    Scan scan() throws NvmlException {
        List<Gpu> gpus = new ArrayList<>();
        List<Physical> physical = new ArrayList<>();
        List<GpuSelection.Candidate> seen = new ArrayList<>();
        int count = nvml.deviceCount();
        for (int i = 0; i < count; i++) {
            MemorySegment handle = nvml.handleByIndex(i);
            String uuid = nvml.uuid(handle);
            boolean mig = nvml.migEnabled(handle);
            GpuSelection.Candidate whole = GpuSelection.Candidate.whole(uuid, i);
            seen.add(whole);
            if (!mig) {
                if (selection.manages(whole)) {
                    physical.add(new Physical(uuid, handle, false));
                    gpus.add(describe(handle, uuid, Optional.empty(), i));
                }
                continue;
            }
            boolean anyManaged = false;
            int max = nvml.maxMigDeviceCount(handle);
            for (int m = 0; m < max; m++) {
                Optional<MemorySegment> migHandle = nvml.migDeviceHandle(handle, m);
                if (migHandle.isEmpty()) {
                    continue;
                }
                String migUuid = nvml.uuid(migHandle.get());
                GpuSelection.Candidate part = new GpuSelection.Candidate(migUuid, OptionalInt.of(i), Optional.of(uuid));
                seen.add(part);
                if (selection.manages(part)) {
                    anyManaged = true;
                    gpus.add(describe(migHandle.get(), migUuid, Optional.of(uuid), i));
                }
            }
            if (anyManaged) {
                physical.add(new Physical(uuid, handle, true));
            }
        }
        return new Scan(gpus, physical, selection.unmatched(seen));
    }

    /** @param index the NVML index of the GPU (a MIG device's: of its GPU) */
    private Gpu describe(MemorySegment handle, String uuid, Optional<String> parent, int index) throws NvmlException {
        Optional<String> lost = Optional.empty();
        Static s = known.get(uuid);
        try {
            if (s == null) {
                s = readStatic(handle, parent.isPresent());
                known.put(uuid, s);
            } else {
                nvml.memory(handle); // cheapest call that reports a GPU gone from the bus
            }
        } catch (NvmlException e) {
            if (!e.gpuLost()) throw e;
            lost = Optional.of("GPU is lost: " + e.getMessage());
            if (s == null) {
                s = new Static(nvml.name(handle), new TreeMap<>(), Optional.empty(), OptionalInt.empty());
            }
        }
        return new Gpu(uuid, handle, s.model, s.attributes, s.pciBusId, lost, parent, s.gpuInstanceId, index);
    }

    private Static readStatic(MemorySegment handle, boolean mig) throws NvmlException {
        SortedMap<String, AttributeValue> attrs = new TreeMap<>();
        nvml.memory(handle).ifPresent(m -> attrs.put(MEMORY, AttributeValue.integer(m.totalBytes() / MIB, Unit.MIB)));
        nvml.powerLimitMilliwatts(handle)
                .ifPresent(mw -> attrs.put(POWER_LIMIT, AttributeValue.integer(mw / 1000, Unit.WATT)));
        putMHz(attrs, CORES_CLOCK, nvml.maxClockMHz(handle, NvmlLayouts.CLOCK_SM));
        putMHz(attrs, MEMORY_CLOCK, nvml.maxClockMHz(handle, NvmlLayouts.CLOCK_MEM));
        nvml.computeCapability(handle).ifPresent(cc -> attrs.put(COMPUTE_CAPABILITY, AttributeValue.text(cc)));
        attrs.put(DRIVER_VERSION, AttributeValue.text(driverVersion));
        cudaVersion.ifPresent(v -> attrs.put(CUDA_VERSION, AttributeValue.text(v)));
        OptionalInt gi = mig ? nvml.gpuInstanceId(handle) : OptionalInt.empty();
        return new Static(nvml.name(handle), attrs, nvml.pciBusId(handle), gi);
    }

    private static void putMHz(Map<String, AttributeValue> attrs, String name, OptionalLong mhz) {
        mhz.ifPresent(v -> attrs.put(name, AttributeValue.integer(v, Unit.MHZ)));
    }
}
