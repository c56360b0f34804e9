package dev.drover.cgroups;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;

/**
 * One mounted cgroup hierarchy: the whole unified tree on v2, or the tree of a few controllers on v1.
 *
 * @param controllers the controllers it carries (on v2, those listed in its cgroup.controllers)
 * @param mountPoint where it is mounted, already resolved against the configured root
 * @param mountRoot which cgroup of the hierarchy the mount shows at {@code mountPoint} ({@code /} unless the mount
 *     is of a subtree)
 * @param ownCgroup the cgroup of this process in this hierarchy, as /proc/self/cgroup names it
 */
public record Hierarchy(Set<String> controllers, Path mountPoint, String mountRoot, String ownCgroup) {

    public Hierarchy {
        controllers = Set.copyOf(controllers);
    }

    /** Whether it carries {@code controller}. */
    public boolean has(String controller) {
        return controllers.contains(controller);
    }

    /**
     * The directory of the cgroup at {@code cgroupPath} (absolute within the hierarchy, such as
     * {@code /drover/task}); an error when the mount does not show that part of the hierarchy.
     */
    Path directory(String cgroupPath) throws IOException {
        String root = mountRoot.equals("/") ? "" : mountRoot;
        if (!cgroupPath.equals(root) && !cgroupPath.startsWith(root + "/")) {
            throw new IOException("cgroup " + cgroupPath + " is outside the part of the hierarchy mounted at "
                    + mountPoint + " (" + mountRoot + ")");
        }
        String below = cgroupPath.substring(root.length());
        Path dir = mountPoint;
        for (String segment : below.split("/")) {
            if (segment.equals("..") || segment.equals(".")) {
                throw new IOException("cgroup path " + cgroupPath + " has a " + segment + " segment");
            }
            if (!segment.isEmpty()) {
                dir = dir.resolve(segment);
            }
        }
        return dir;
    }
}
