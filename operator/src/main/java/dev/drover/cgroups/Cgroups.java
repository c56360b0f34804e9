package dev.drover.cgroups;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The node's cgroups as Drover uses them: detected once at start, then task cgroups made, found again and
 * removed under a {@link CgroupParent}. Every directory on the way is checked to be a real directory: a link is
 * refused, never followed.
 */
public final class Cgroups {

    /** The v2 controllers a task cgroup needs, enabled in each parent's cgroup.subtree_control where offered. */
    static final List<String> V2_CONTROLLERS = List.of("cpu", "memory", "pids");

    private final CgroupLayout layout;
    private final ProcessControl control;
    private final Subtree subtree;

    private Cgroups(CgroupLayout layout, ProcessControl control, Subtree subtree) {
        this.layout = layout;
        this.control = control;
        this.subtree = subtree;
    }

    /** The host's cgroups, from {@code /proc/self}. */
    public static Cgroups detect() throws IOException {
        return detect(Path.of("/"), ProcessControl.system());
    }

    /** The cgroups seen under {@code root} (a fake tree in tests), killing and waiting through {@code control}. */
    public static Cgroups detect(Path root, ProcessControl control) throws IOException {
        return detect(root, control, Subtree.LIMIT);
    }

    /** As {@link #detect(Path, ProcessControl)}, each kill and removal walking at most {@code subtreeLimit} cgroups. */
    static Cgroups detect(Path root, ProcessControl control, int subtreeLimit) throws IOException {
        return new Cgroups(CgroupLayout.detect(root), control, new Subtree(subtreeLimit));
    }

    public CgroupLayout layout() {
        return layout;
    }

    /** For logs and metrics: "cgroup v2", "cgroup v1 (cpu,cpuacct,memory,pids,freezer)". */
    public String description() {
        return layout.description();
    }

    /**
     * Makes cgroup {@code name} under {@code parent}, and the parent's directories that are missing; on v1 in every
     * hierarchy, on v2 with the cpu, memory and pids controllers enabled on the way down. One that exists already
     * (as a real directory) is taken as it is, so a create retried after a crash succeeds; one that cannot be made in
     * every hierarchy is made in none (the parent's directories made on the way stay).
     */
    public Cgroup create(CgroupParent parent, String name) throws IOException {
        CgroupParent.requireName(name);
        Map<Hierarchy, Path> dirs = new LinkedHashMap<>();
        for (Hierarchy h : layout.hierarchies()) {
            Path dir = base(h, parent);
            List<Path> parents = new ArrayList<>(List.of(dir));
            for (String segment : parent.segments()) {
                dir = dir.resolve(segment);
                CgroupFiles.makeDirectory(dir);
                parents.add(dir);
            }
            if (layout.version() == CgroupVersion.V2) {
                for (Path p : parents) {
                    enableControllers(p);
                }
            }
            dirs.put(h, dir.resolve(name));
        }
        CgroupFiles.makeDirectories(dirs.values());
        return cgroup(name, dirs);
    }

    /**
     * Removes the cgroup {@code name} under {@code parent} with each cgroup in it that holds no process, for a
     * parent Drover made for its tasks. A child still holding processes stays, and so does the parent (its removal
     * then fails, naming it): whoever started them must end them. Nothing there is fine.
     */
    public void removeWithIdleChildren(CgroupParent parent, String name, Duration timeout)
            throws IOException, InterruptedException {
        Optional<Cgroup> top = find(parent, name);
        if (top.isEmpty()) {
            return;
        }
        CgroupParent below = parent.child(name);
        for (String child : top.get().childNames()) {
            Optional<Cgroup> c = find(below, child);
            if (c.isPresent() && c.get().pids().isEmpty()) {
                c.get().remove(timeout);
            }
        }
        top.get().remove(timeout);
    }

    /**
     * The cgroup {@code name} under {@code parent} if it exists, as after an agent restart: nothing is made or
     * moved. On v1 it holds the hierarchies it is found in (a crash may have left one made only in some).
     */
    public Optional<Cgroup> find(CgroupParent parent, String name) throws IOException {
        CgroupParent.requireName(name);
        Map<Hierarchy, Path> dirs = new LinkedHashMap<>();
        for (Hierarchy h : layout.hierarchies()) {
            Path dir = base(h, parent);
            boolean found = true;
            for (String segment : parent.segments()) {
                dir = dir.resolve(segment);
                if (!CgroupFiles.isDirectory(dir)) {
                    CgroupFiles.requireDirectoryOrAbsent(dir);
                    found = false;
                    break;
                }
            }
            if (found) {
                dir = dir.resolve(name);
                CgroupFiles.requireDirectoryOrAbsent(dir);
                if (CgroupFiles.isDirectory(dir)) {
                    dirs.put(h, dir);
                }
            }
        }
        return dirs.isEmpty() ? Optional.empty() : Optional.of(cgroup(name, dirs));
    }

    private Cgroup cgroup(String name, Map<Hierarchy, Path> dirs) {
        if (layout.version() == CgroupVersion.V2) {
            return new CgroupV2(name, dirs.values().iterator().next(), control, subtree);
        }
        return new CgroupV1(name, dirs, control, subtree);
    }

    /**
     * The directory the parent's segments start from: the hierarchy's mount point, or this process's own cgroup in
     * it; each directory from the mount point down checked to be real.
     */
    private static Path base(Hierarchy h, CgroupParent parent) throws IOException {
        Path base = h.directory(parent.belowOwn() ? h.ownCgroup() : h.mountRoot());
        Path dir = h.mountPoint();
        CgroupFiles.requireDirectory(dir);
        for (Path segment : h.mountPoint().relativize(base)) {
            dir = dir.resolve(segment);
            CgroupFiles.requireDirectory(dir);
        }
        return base;
    }

    /**
     * Enables in {@code dir}'s cgroup.subtree_control the controllers a task needs that it offers and has not
     * enabled yet. A directory without cgroup.controllers is no v2 cgroup and is left alone.
     */
    private static void enableControllers(Path dir) throws IOException {
        Path offered = dir.resolve("cgroup.controllers");
        Path enabledFile = dir.resolve("cgroup.subtree_control");
        if (!CgroupFiles.exists(offered)) {
            return;
        }
        Set<String> available = words(CgroupFiles.read(offered, CgroupFiles.VALUE_LIMIT));
        Set<String> enabled = words(CgroupFiles.read(enabledFile, CgroupFiles.VALUE_LIMIT));
        StringBuilder wanted = new StringBuilder();
        for (String c : V2_CONTROLLERS) {
            if (available.contains(c) && !enabled.contains(c)) {
                wanted.append(wanted.isEmpty() ? "" : " ").append('+').append(c);
            }
        }
        if (wanted.isEmpty()) {
            return;
        }
        try {
            CgroupFiles.write(enabledFile, wanted.toString());
        } catch (IOException e) {
            throw new IOException(
                    e.getMessage() + " (cgroup v2 hands controllers down only from a cgroup that holds"
                            + " no process itself: give a cgroup parent below a cgroup without processes, or run the agent"
                            + " in a leaf cgroup of its own)",
                    e);
        }
    }

    private static Set<String> words(String text) {
        Set<String> words = new TreeSet<>();
        for (String w : text.strip().split(" ")) {
            if (!w.isEmpty()) {
                words.add(w);
            }
        }
        return words;
    }
}
