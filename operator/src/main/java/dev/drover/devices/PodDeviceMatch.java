package dev.drover.devices;

import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.podresources.PodDevices;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Which of the node's instances the devices Pods hold are: a Pod's device ID names an instance by its ID (for
 * NVIDIA GPUs the UUID, {@code GPU-...} or {@code MIG-...}), the GPU a MIG instance is part of by its UUID, or, for
 * {@code nvidia.com/gpu} (the NVIDIA plugin's {@code DEVICE_ID_STRATEGY=index}), a GPU by its index (with its MIG
 * instances). A replica of a shared GPU ({@code GPU-...::2}, time-slicing) is its GPU. A pure function.
 */
final class PodDeviceMatch {

    static final String NVIDIA_GPU = "nvidia.com/gpu";

    private PodDeviceMatch() {}

    /** The instances Pods hold, by instance ID, each to its Pod; one held by two Pods names the first. */
    static Map<String, String> held(Collection<DeviceManager.Device> devices, List<PodDevices> pods) {
        Map<String, String> out = new TreeMap<>();
        for (PodDevices p : pods) {
            for (String raw : p.deviceIds()) {
                int replica = raw.indexOf("::");
                String id = replica < 0 ? raw : raw.substring(0, replica);
                for (DeviceManager.Device d : devices) {
                    if (names(d.instance(), p.resource(), id)) {
                        out.putIfAbsent(d.instance().id(), p.podName());
                    }
                }
            }
        }
        return out;
    }

    private static boolean names(DeviceInstance instance, String resource, String id) {
        if (instance.id().equals(id)) {
            return true;
        }
        Optional<DeviceInstance.GpuSlot> slot = instance.gpu();
        if (slot.isEmpty()) {
            return false;
        }
        if (slot.get().gpuUuid().equals(id)) {
            return true;
        }
        return resource.equals(NVIDIA_GPU)
                && !id.isEmpty()
                && id.length() <= 4
                && id.chars().allMatch(c -> c >= '0' && c <= '9')
                && slot.get().index() == Integer.parseInt(id);
    }
}
