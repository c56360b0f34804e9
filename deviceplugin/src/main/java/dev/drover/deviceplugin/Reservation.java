package dev.drover.deviceplugin;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a task needs to use reserved instances.
 *
 * @param env         environment variables for the task ({@code NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b})
 * @param mounts      host paths to bind into the task
 * @param deviceNodes device files to expose to the task
 * @param cdiDevices  the instances by their fully qualified CDI names ({@code vendor/class=name}), as a CDI spec
 *                    file on the host describes them ({@code nvidia.com/gpu=GPU-...}); a container driver applies
 *                    those specs' edits, a host process needs none of it
 */
public record Reservation(
        Map<String, String> env, List<Mount> mounts, List<DeviceNode> deviceNodes, List<String> cdiDevices) {

    public Reservation {
        env = Map.copyOf(env);
        mounts = List.copyOf(mounts);
        deviceNodes = List.copyOf(deviceNodes);
        cdiDevices = List.copyOf(cdiDevices);
    }

    /** No CDI names. */
    public Reservation(Map<String, String> env, List<Mount> mounts, List<DeviceNode> deviceNodes) {
        this(env, mounts, deviceNodes, List.of());
    }

    public static Reservation ofEnv(Map<String, String> env) {
        return new Reservation(env, List.of(), List.of());
    }

    /** This reservation with {@code names} as its CDI names. */
    public Reservation withCdiDevices(List<String> names) {
        return new Reservation(env, mounts, deviceNodes, names);
    }

    /** A host path bound into the task at {@code taskPath}. */
    public record Mount(String hostPath, String taskPath, boolean readOnly) {
        public Mount {
            Objects.requireNonNull(hostPath, "hostPath");
            Objects.requireNonNull(taskPath, "taskPath");
        }
    }

    /** A device file exposed to the task; {@code permissions} as cgroups write them: {@code rwm}. */
    public record DeviceNode(String hostPath, String taskPath, String permissions) {
        public DeviceNode {
            Objects.requireNonNull(hostPath, "hostPath");
            Objects.requireNonNull(taskPath, "taskPath");
            Objects.requireNonNull(permissions, "permissions");
        }
    }
}
