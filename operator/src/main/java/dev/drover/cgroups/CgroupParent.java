package dev.drover.cgroups;

import dev.drover.common.UserText;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Where task cgroups are made: a path from the top of each hierarchy as mounted ({@code /drover.slice}), or one below this
 * process's own cgroup ({@code drover}, without the leading slash), which on v1 may differ from hierarchy to
 * hierarchy. Directories on the way that do not exist yet are made.
 *
 * @param belowOwn whether {@code segments} start at this process's own cgroup rather than at the root
 * @param segments the directories, each a valid {@linkplain #requireName name}
 */
public record CgroupParent(boolean belowOwn, List<String> segments) {

    /** Longest cgroup name; the kernel allows 255 bytes, and a name is part of every path Drover writes. */
    public static final int NAME_LIMIT = 128;
    /** Most levels of a parent. */
    public static final int DEPTH_LIMIT = 16;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:@-]+");

    public CgroupParent {
        segments = List.copyOf(segments);
        if (segments.size() > DEPTH_LIMIT) {
            throw new IllegalArgumentException(
                    "cgroup parent has " + segments.size() + " levels; at most " + DEPTH_LIMIT + " are allowed");
        }
        segments.forEach(CgroupParent::requireName);
    }

    /** This process's own cgroup in each hierarchy. */
    public static CgroupParent own() {
        return new CgroupParent(true, List.of());
    }

    /**
     * {@code /a/b} (from each hierarchy's root) or {@code a/b} (below this process's own cgroup); an error, naming
     * the value, for an empty path, an empty or {@code ..} segment, or a character outside
     * {@code A-Z a-z 0-9 _ . : @ -}.
     */
    public static CgroupParent parse(String path) {
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException("cgroup parent is empty: give /path (from the root of the cgroup"
                    + " hierarchy) or path (below the agent's own cgroup)");
        }
        boolean belowOwn = !path.startsWith("/");
        String rest = belowOwn ? path : path.substring(1);
        List<String> segments = new ArrayList<>();
        if (!rest.isEmpty()) {
            for (String segment : rest.split("/", -1)) {
                segments.add(segment);
            }
        }
        try {
            return new CgroupParent(belowOwn, segments);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("cgroup parent " + UserText.quote(path) + ": " + e.getMessage(), e);
        }
    }

    /** The parent one level further down. */
    public CgroupParent child(String name) {
        List<String> longer = new ArrayList<>(segments);
        longer.add(name);
        return new CgroupParent(belowOwn, longer);
    }

    /**
     * Fails unless {@code name} can name one cgroup directory: 1 to {@link #NAME_LIMIT} characters of
     * {@code A-Z a-z 0-9 _ . : @ -}, not starting with a dot and without {@code ..}, so it can never climb out of
     * its parent or hide among the kernel's {@code cgroup.*} files.
     */
    public static String requireName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a cgroup name must not be empty");
        }
        if (name.length() > NAME_LIMIT) {
            throw new IllegalArgumentException(
                    "cgroup name " + UserText.quote(name) + " is longer than " + NAME_LIMIT + " characters");
        }
        if (!NAME.matcher(name).matches()
                || name.startsWith(".")
                || name.contains("..")
                || name.startsWith("cgroup.")) {
            throw new IllegalArgumentException("cgroup name " + UserText.quote(name) + " may hold only A-Z a-z 0-9"
                    + " _ . : @ -, and must not start with a dot or cgroup. nor hold ..");
        }
        return name;
    }

    @Override
    public String toString() {
        return (belowOwn ? "" : "/") + String.join("/", segments);
    }
}
