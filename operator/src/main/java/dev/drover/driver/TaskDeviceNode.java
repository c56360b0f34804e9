package dev.drover.driver;

import java.util.Objects;

/**
 * A device file a task may use: one of the devices reserved for it, as its plugin names it.
 *
 * @param path        where the task sees it
 * @param hostPath    the device file on the host
 * @param permissions the cgroup access it is given, of {@code r}, {@code w} and {@code m}
 */
public record TaskDeviceNode(String path, String hostPath, String permissions) {

    public TaskDeviceNode {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(hostPath, "hostPath");
        permissions = permissions == null || permissions.isEmpty() ? "rw" : permissions;
    }
}
