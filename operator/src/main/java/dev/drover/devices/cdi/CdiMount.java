package dev.drover.devices.cdi;

import java.util.List;

/**
 * A bind mount a CDI spec gives a container ({@code containerEdits.mounts[]}): a driver library, a socket.
 *
 * @param hostPath      absolute and clean
 * @param containerPath absolute and clean, neither {@code /} nor under {@code /proc} or {@code /sys}
 * @param options       bind mount options from a fixed set ({@code ro}, {@code nosuid}, ...)
 */
public record CdiMount(String hostPath, String containerPath, List<String> options) {

    public CdiMount {
        options = List.copyOf(options);
    }
}
