package dev.drover.driver;

import java.util.ArrayList;
import java.util.List;

/**
 * What a start lends a task beyond its own directories, filled in by its prestart hooks: host paths bound in, the
 * devices reserved for it, and the registry credentials its image may be pulled with.
 *
 * @param mounts          host paths bound into the task, in order
 * @param deviceNodes     device files of its reserved devices (where no CDI spec names them)
 * @param cdiDevices      its reserved devices by their fully qualified CDI names ({@code vendor/class=name})
 * @param registryConfigs {@code .dockerconfigjson} documents of its allocation's {@code imagePullSecrets}, in order
 * @param networkNamespace the network namespace its allocation's tasks share (a path the agent bound it to); null: the
 *                        driver's own choice (the node's network)
 */
public record TaskAttachments(
        List<TaskMount> mounts,
        List<TaskDeviceNode> deviceNodes,
        List<String> cdiDevices,
        List<String> registryConfigs,
        java.nio.file.Path networkNamespace) {

    /** Nothing lent. */
    public static final TaskAttachments NONE = new TaskAttachments(List.of(), List.of(), List.of(), List.of(), null);

    /** Nothing lent but these, in the node's network. */
    public TaskAttachments(
            List<TaskMount> mounts,
            List<TaskDeviceNode> deviceNodes,
            List<String> cdiDevices,
            List<String> registryConfigs) {
        this(mounts, deviceNodes, cdiDevices, registryConfigs, null);
    }

    public TaskAttachments {
        mounts = List.copyOf(mounts);
        deviceNodes = List.copyOf(deviceNodes);
        cdiDevices = List.copyOf(cdiDevices);
        registryConfigs = List.copyOf(registryConfigs);
    }

    /** Counts the credentials, never shows them. */
    @Override
    public String toString() {
        return "TaskAttachments[mounts=" + mounts + ", deviceNodes=" + deviceNodes + ", cdiDevices=" + cdiDevices
                + ", registryConfigs=" + registryConfigs.size() + ", networkNamespace=" + networkNamespace + "]";
    }

    /** Collects a start's attachments as its hooks run. */
    public static final class Builder {
        private final List<TaskMount> mounts = new ArrayList<>();
        private final List<TaskDeviceNode> deviceNodes = new ArrayList<>();
        private final List<String> cdiDevices = new ArrayList<>();
        private final List<String> registryConfigs = new ArrayList<>();
        private java.nio.file.Path networkNamespace;

        public Builder mount(TaskMount m) {
            mounts.add(m);
            return this;
        }

        public Builder deviceNode(TaskDeviceNode d) {
            deviceNodes.add(d);
            return this;
        }

        public Builder cdiDevice(String qualifiedName) {
            cdiDevices.add(qualifiedName);
            return this;
        }

        public Builder registryConfig(String dockerConfigJson) {
            registryConfigs.add(dockerConfigJson);
            return this;
        }

        public Builder networkNamespace(java.nio.file.Path namespace) {
            networkNamespace = namespace;
            return this;
        }

        public TaskAttachments build() {
            return new TaskAttachments(mounts, deviceNodes, cdiDevices, registryConfigs, networkNamespace);
        }
    }
}
