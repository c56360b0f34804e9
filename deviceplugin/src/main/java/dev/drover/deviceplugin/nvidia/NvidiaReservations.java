package dev.drover.deviceplugin.nvidia;

import dev.drover.deviceplugin.Reservation;
import java.util.List;
import java.util.Map;

/**
 * What a task needs to see reserved NVIDIA GPUs, and only them: {@code CUDA_VISIBLE_DEVICES}, which CUDA reads in
 * every process (a raw_exec task's too), and {@code NVIDIA_VISIBLE_DEVICES}, which the NVIDIA container runtime
 * reads to give a container just those GPUs. Both name the GPUs by UUID (MIG devices by their own {@code MIG-...}
 * UUIDs) in the order given, so CUDA's device 0 is the first of them.
 */
public final class NvidiaReservations {

    public static final String VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES";
    public static final String CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES";
    /** The CDI kind of the spec {@code nvidia-ctk cdi generate} writes. */
    public static final String CDI_KIND = "nvidia.com/gpu";

    private NvidiaReservations() {}

    public static Reservation visibleDevices(List<String> uuids) {
        if (uuids.isEmpty()) {
            return Reservation.ofEnv(Map.of());
        }
        String list = String.join(",", uuids);
        return Reservation.ofEnv(Map.of(VISIBLE_DEVICES, list, CUDA_VISIBLE_DEVICES, list));
    }

    /**
     * As {@link #visibleDevices}, with each GPU's CDI name as {@code nvidia-ctk cdi generate} writes it for its UUID
     * ({@code nvidia.com/gpu=GPU-...}, a MIG device's {@code nvidia.com/gpu=MIG-...}): a container is given the
     * device nodes, libraries and hooks that spec lists for exactly these.
     */
    public static Reservation withCdi(List<String> uuids) {
        return visibleDevices(uuids)
                .withCdiDevices(uuids.stream().map(u -> CDI_KIND + "=" + u).toList());
    }

    /**
     * For a task given no NVIDIA GPU: CUDA sees none (an empty {@code CUDA_VISIBLE_DEVICES} hides every device),
     * and the NVIDIA container runtime adds none ({@code void}).
     */
    public static Map<String, String> noneVisible() {
        return Map.of(CUDA_VISIBLE_DEVICES, "", VISIBLE_DEVICES, "void");
    }
}
