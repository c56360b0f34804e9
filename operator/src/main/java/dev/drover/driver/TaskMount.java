package dev.drover.driver;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A host path bound into a task's view of the filesystem: a host volume, or a file a device plugin lends with its
 * device. Drivers with a root of their own ({@code oci}, {@code exec}) bind it at {@code destination}.
 *
 * @param source      the path on the host
 * @param destination the absolute path inside the task
 * @param readOnly    whether the task may only read it
 */
public record TaskMount(Path source, String destination, boolean readOnly) {

    public TaskMount {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(destination, "destination");
    }
}
