package dev.drover.deviceplugin.nvidia;

import dev.drover.deviceplugin.Reservation;
import java.util.List;
import java.util.Map;

/**
 * What a task needs to see reserved NVIDIA GPUs: {@code NVIDIA_VISIBLE_DEVICES}, a comma-separated list of UUIDs
 * (MIG devices by their own {@code MIG-...} UUIDs), which the NVIDIA container runtime reads to give a container
 * just those GPUs. CUDA itself reads {@code CUDA_VISIBLE_DEVICES}, not this variable: a process no such runtime
 * starts (a raw_exec task) is not limited by it.
 */
public final class NvidiaReservations {

    public static final String VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES";

    private NvidiaReservations() {}

    public static Reservation visibleDevices(List<String> uuids) {
        if (uuids.isEmpty()) {
            return Reservation.ofEnv(Map.of());
        }
        return Reservation.ofEnv(Map.of(VISIBLE_DEVICES, String.join(",", uuids)));
    }
}
