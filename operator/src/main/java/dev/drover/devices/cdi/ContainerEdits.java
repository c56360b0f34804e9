package dev.drover.devices.cdi;

import java.util.ArrayList;
import java.util.List;

/**
 * What a CDI spec changes in a container ({@code containerEdits}): environment variables ({@code NAME=value}), device
 * nodes, bind mounts and hooks, each in order.
 */
public record ContainerEdits(
        List<String> env, List<CdiDeviceNode> deviceNodes, List<CdiMount> mounts, List<CdiHook> hooks) {

    public static final ContainerEdits NONE = new ContainerEdits(List.of(), List.of(), List.of(), List.of());

    public ContainerEdits {
        env = List.copyOf(env);
        deviceNodes = List.copyOf(deviceNodes);
        mounts = List.copyOf(mounts);
        hooks = List.copyOf(hooks);
    }

    /** These edits, then {@code more}'s. */
    public ContainerEdits plus(ContainerEdits more) {
        return new ContainerEdits(
                concat(env, more.env),
                concat(deviceNodes, more.deviceNodes),
                concat(mounts, more.mounts),
                concat(hooks, more.hooks));
    }

    public boolean isEmpty() {
        return env.isEmpty() && deviceNodes.isEmpty() && mounts.isEmpty() && hooks.isEmpty();
    }

    private static <T> List<T> concat(List<T> a, List<T> b) {
        List<T> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }
}
