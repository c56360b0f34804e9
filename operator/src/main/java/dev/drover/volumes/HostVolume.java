package dev.drover.volumes;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Set;

/**
 * A directory of the node that the agent's config ({@code hostVolumes}) lends to allocations by name.
 *
 * @param path       absolute and clean, checked at the agent's start and again at each task's start
 * @param readOnly   whether every mount of it is read-only, whatever a task's mount says
 * @param namespaces the Allocation namespaces that may use it; {@link #ALL} for every one; empty for none
 */
public record HostVolume(String name, Path path, boolean readOnly, Set<String> namespaces) {

    /** In {@code namespaces}: every namespace. */
    public static final String ALL = "*";

    public HostVolume {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(path, "path");
        namespaces = Set.copyOf(namespaces);
    }

    /** Whether an allocation of {@code namespace} may use it. */
    public boolean allows(String namespace) {
        return namespaces.contains(ALL) || namespaces.contains(namespace);
    }
}
