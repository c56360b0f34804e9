package dev.drover.deviceplugin;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One device a task can be given.
 *
 * @param id                stable identity (for NVIDIA GPUs the UUID, {@code GPU-...} or {@code MIG-...})
 * @param healthDescription why it is unhealthy (or what recovered it); empty when there is nothing to say
 * @param pciBusId          {@code domain:bus:device.function}, when the device has one
 * @param gpu               where a GPU sits on its node, when the plugin knows (metrics name GPUs by it)
 */
public record DeviceInstance(
        String id, boolean healthy, String healthDescription, Optional<String> pciBusId, Optional<GpuSlot> gpu) {

    /**
     * A GPU's place on its node, as NVML (and so dcgm-exporter) names it.
     *
     * @param index         the GPU's NVML index; for a MIG device, its GPU's
     * @param gpuUuid       the GPU's UUID; for a MIG device, its GPU's (the instance's own ID is {@link #id})
     * @param gpuInstanceId a MIG device's GPU instance ID; empty for a whole GPU
     */
    public record GpuSlot(int index, String gpuUuid, OptionalInt gpuInstanceId) {
        public GpuSlot {
            if (index < 0) {
                throw new IllegalArgumentException("GPU index " + index + " is negative");
            }
            Objects.requireNonNull(gpuUuid, "gpuUuid");
            Objects.requireNonNull(gpuInstanceId, "gpuInstanceId");
        }

        /** A whole GPU. */
        public static GpuSlot whole(int index, String uuid) {
            return new GpuSlot(index, uuid, OptionalInt.empty());
        }
    }

    public DeviceInstance {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(healthDescription, "healthDescription");
        Objects.requireNonNull(pciBusId, "pciBusId");
        Objects.requireNonNull(gpu, "gpu");
    }

    /** A device whose place the plugin does not tell. */
    public DeviceInstance(String id, boolean healthy, String healthDescription, Optional<String> pciBusId) {
        this(id, healthy, healthDescription, pciBusId, Optional.empty());
    }

    public static DeviceInstance healthy(String id) {
        return new DeviceInstance(id, true, "", Optional.empty());
    }

    /** This device with another health. */
    public DeviceInstance withHealth(boolean healthy, String healthDescription) {
        return new DeviceInstance(id, healthy, healthDescription, pciBusId, gpu);
    }
}
