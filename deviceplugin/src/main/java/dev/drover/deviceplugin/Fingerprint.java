package dev.drover.deviceplugin;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * All devices a plugin sees at one moment.
 *
 * @param groups            devices grouped by vendor, type, model and attributes
 * @param unavailableReason why the plugin sees no devices although it runs (e.g. the NVIDIA library is
 *                          missing); empty when it sees what there is
 */
public record Fingerprint(List<DeviceGroup> groups, Optional<String> unavailableReason) {

    public Fingerprint {
        groups = List.copyOf(groups);
        Objects.requireNonNull(unavailableReason, "unavailableReason");
    }

    public static Fingerprint of(List<DeviceGroup> groups) {
        return new Fingerprint(groups, Optional.empty());
    }

    /** No devices, and why. */
    public static Fingerprint unavailable(String reason) {
        return new Fingerprint(List.of(), Optional.of(reason));
    }

    /** Every instance of every group, in order. */
    public List<DeviceInstance> instances() {
        return groups.stream().flatMap(g -> g.instances().stream()).toList();
    }
}
