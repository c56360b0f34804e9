package dev.drover.deviceplugin;

import java.util.Objects;
import java.util.Optional;

/**
 * One device a task can be given.
 *
 * @param id                stable identity (for NVIDIA GPUs the UUID, {@code GPU-...} or {@code MIG-...})
 * @param healthDescription why it is unhealthy (or what recovered it); empty when there is nothing to say
 * @param pciBusId          {@code domain:bus:device.function}, when the device has one
 */
public record DeviceInstance(String id, boolean healthy, String healthDescription, Optional<String> pciBusId) {

    public DeviceInstance {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(healthDescription, "healthDescription");
        Objects.requireNonNull(pciBusId, "pciBusId");
    }

    public static DeviceInstance healthy(String id) {
        return new DeviceInstance(id, true, "", Optional.empty());
    }
}
