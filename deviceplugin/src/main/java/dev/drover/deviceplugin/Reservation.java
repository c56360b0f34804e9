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
 */
public record Reservation(Map<String, String> env, List<Mount> mounts, List<DeviceNode> deviceNodes) {

    public Reservation {
        env = Map.copyOf(env);
        mounts = List.copyOf(mounts);
        deviceNodes = List.copyOf(deviceNodes);
    }

    public static Reservation ofEnv(Map<String, String> env) {
        return new Reservation(env, List.of(), List.of());
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
