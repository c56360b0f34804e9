package dev.drover.deviceplugin.nvidia;

import dev.drover.deviceplugin.Reservation;

import java.util.List;
import java.util.Map;

/**
 * What a task needs to see reserved NVIDIA GPUs: the NVIDIA container runtime (and CUDA itself, through
 * {@code CUDA_VISIBLE_DEVICES} semantics in the toolkit) reads {@code NVIDIA_VISIBLE_DEVICES}, a comma-separated
 * list of UUIDs; MIG devices are named by their own {@code MIG-...} UUIDs.
 */
public final class NvidiaReservations {

    public static final String VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES";

    private NvidiaReservations() {
    }

    public static Reservation visibleDevices(List<String> uuids) {
        if (uuids.isEmpty()) {
            return Reservation.ofEnv(Map.of());
        }
        return Reservation.ofEnv(Map.of(VISIBLE_DEVICES, String.join(",", uuids)));
    }
}
