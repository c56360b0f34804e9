package dev.drover.cgroups;

import dev.drover.common.MountTable;
import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Which cgroup hierarchies this node has, learnt from /proc/self/mountinfo and /proc/self/cgroup, every path
 * resolved against a root (the host's {@code /}, or a test's fake tree).
 *
 * <p>cgroup v1 is in use when any of the controllers Drover uses is mounted as a v1 hierarchy (a "hybrid" node
 * with an empty v2 tree beside them is v1); otherwise cgroup v2 when a cgroup2 file system is mounted.
 *
 * @param version which one is in use
 * @param hierarchies the unified tree alone on v2; on v1 one per mounted hierarchy that carries a controller
 *     Drover uses, in the order of {@link #V1_CONTROLLERS}
 */
public record CgroupLayout(CgroupVersion version, List<Hierarchy> hierarchies) {

    /** The v1 controllers Drover uses, in the order descriptions list them. */
    public static final List<String> V1_CONTROLLERS = List.of("cpu", "cpuacct", "memory", "pids", "freezer", "devices");

    private static final int MOUNTINFO_LIMIT = 4 * 1024 * 1024;
    private static final int PROC_CGROUP_LIMIT = 64 * 1024;
    private static final int PATH_LIMIT = 4096;

    public CgroupLayout {
        hierarchies = List.copyOf(hierarchies);
    }

    /** Reads {@code root}/proc/self/mountinfo and {@code root}/proc/self/cgroup. */
    public static CgroupLayout detect(Path root) throws IOException {
        Path mountinfo = root.resolve("proc/self/mountinfo");
        Path procCgroup = root.resolve("proc/self/cgroup");
        Map<String, String> own = ownCgroups(procCgroup);
        List<Mount> mounts = mounts(mountinfo, root);

        List<Hierarchy> v1 = new ArrayList<>();
        Set<Set<String>> seen = new java.util.HashSet<>();
        for (String controller : V1_CONTROLLERS) {
            for (Mount m : mounts) {
                if (m.type.equals("cgroup") && m.controllers.contains(controller) && seen.add(m.controllers)) {
                    v1.add(new Hierarchy(m.controllers, m.point, m.root, ownIn(own, m.controllers, procCgroup)));
                }
            }
        }
        if (!v1.isEmpty()) {
            return new CgroupLayout(CgroupVersion.V1, v1);
        }
        Mount unified = null;
        for (Mount m : mounts) {
            if (m.type.equals("cgroup2") && (unified == null || m.point.equals(root.resolve("sys/fs/cgroup")))) {
                unified = m;
            }
        }
        if (unified == null) {
            throw new IOException("no cgroup hierarchy is mounted (none in " + mountinfo + ")");
        }
        String ownPath = own.get("");
        if (ownPath == null) {
            throw new IOException(procCgroup + " has no cgroup v2 line (0::/path)");
        }
        Path controllersFile = unified.point.resolve("cgroup.controllers");
        Set<String> controllers = new LinkedHashSet<>();
        for (String c : CgroupFiles.read(controllersFile, CgroupFiles.VALUE_LIMIT)
                .strip()
                .split(" ")) {
            if (!c.isEmpty()) {
                controllers.add(c);
            }
        }
        return new CgroupLayout(
                CgroupVersion.V2, List.of(new Hierarchy(controllers, unified.point, unified.root, ownPath)));
    }

    /** "cgroup v2", or "cgroup v1 (cpu,cpuacct,memory,pids,freezer)" naming the controllers found. */
    public String description() {
        if (version == CgroupVersion.V2) {
            return "cgroup v2";
        }
        List<String> found = new ArrayList<>();
        for (String c : V1_CONTROLLERS) {
            if (hierarchy(c).isPresent()) {
                found.add(c);
            }
        }
        return "cgroup v1 (" + String.join(",", found) + ")";
    }

    /** The hierarchy carrying {@code controller} (on v2 the unified one, whatever it carries). */
    public Optional<Hierarchy> hierarchy(String controller) {
        if (version == CgroupVersion.V2) {
            return Optional.of(hierarchies.getFirst());
        }
        return hierarchies.stream().filter(h -> h.has(controller)).findFirst();
    }

    private record Mount(String type, Set<String> controllers, Path point, String root) {}

    private static List<Mount> mounts(Path mountinfo, Path root) throws IOException {
        List<Mount> mounts = new ArrayList<>();
        int lineNumber = 0;
        for (String line : CgroupFiles.read(mountinfo, MOUNTINFO_LIMIT).split("\n")) {
            lineNumber++;
            if (!line.contains(" - cgroup")) {
                continue;
            }
            String[] f = line.split(" ");
            int dash = List.of(f).indexOf("-");
            if (dash < 6 || f.length < dash + 4) {
                throw new IOException(mountinfo + " line " + lineNumber + " is not a mount: " + UserText.quote(line));
            }
            String type = f[dash + 1];
            if (!type.equals("cgroup") && !type.equals("cgroup2")) {
                continue;
            }
            String mountRoot = cgroupPath(MountTable.unescape(f[3]), mountinfo);
            String point = cgroupPath(MountTable.unescape(f[4]), mountinfo); // absolute, no dot segments: checked alike
            Set<String> controllers = new LinkedHashSet<>();
            for (String option : f[dash + 3].split(",")) {
                if (V1_CONTROLLERS.contains(option)) {
                    controllers.add(option);
                }
            }
            mounts.add(new Mount(type, controllers, root.resolve(point.substring(1)), mountRoot));
        }
        return mounts;
    }

    /** Controller list (or "" for v2) to the process's cgroup path, from /proc/self/cgroup. */
    private static Map<String, String> ownCgroups(Path file) throws IOException {
        Map<String, String> own = new HashMap<>();
        for (String line : CgroupFiles.read(file, PROC_CGROUP_LIMIT).split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split(":", 3);
            if (f.length != 3) {
                throw new IOException(file + " line should be id:controllers:path, not " + UserText.quote(line));
            }
            String path = cgroupPath(f[2], file);
            if (f[1].isEmpty()) {
                own.put("", path);
            }
            for (String controller : f[1].split(",")) {
                if (!controller.isEmpty()) {
                    own.put(controller, path);
                }
            }
        }
        return own;
    }

    private static String ownIn(Map<String, String> own, Set<String> controllers, Path file) throws IOException {
        for (String c : controllers) {
            String path = own.get(c);
            if (path != null) {
                return path;
            }
        }
        throw new IOException(file + " names no cgroup of this process for " + String.join(",", controllers));
    }

    /** A path as the kernel writes one: absolute, bounded, without . or .. segments. */
    private static String cgroupPath(String path, Path file) throws IOException {
        if (!path.startsWith("/") || path.length() > PATH_LIMIT) {
            throw new IOException(file + " names a path that is not absolute or is too long: " + UserText.quote(path));
        }
        for (String segment : path.split("/")) {
            if (segment.equals(".") || segment.equals("..") || segment.indexOf('\0') >= 0) {
                throw new IOException(
                        file + " names a path with a " + UserText.quote(segment) + " segment: " + UserText.quote(path));
            }
        }
        return path;
    }
}
