package dev.drover.credentials;

import dev.drover.common.UserText;
import dev.drover.fs.PathNames;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The files of one projection, checked and arranged as the tree they make: which names each directory holds
 * ({@code ""} is the data directory itself) and which of them are files. Paths are relative, without {@code .},
 * {@code ..} or empty components ({@link PathNames}); a first component starting with {@code ..} is refused (those
 * names are the writer's: {@code ..data} and the data directories), as is a path that is both a file and a
 * directory ({@code conf} and {@code conf/app.yaml}). At most {@link #MAX_FILES} files and {@link #MAX_BYTES} bytes.
 */
final class ProjectedPaths {

    static final int MAX_FILES = 1000;
    static final long MAX_BYTES = 8L << 20;

    private final SortedMap<String, ProjectedFile> files = new TreeMap<>();
    private final SortedMap<String, SortedSet<String>> children = new TreeMap<>();

    private ProjectedPaths() {}

    /** Checks {@code files} (relative path to file); IllegalArgumentException saying what is wrong. */
    static ProjectedPaths of(Map<String, ProjectedFile> files) {
        if (files.size() > MAX_FILES) {
            throw new IllegalArgumentException(
                    "a projection may hold at most " + MAX_FILES + " files; this one has " + files.size());
        }
        ProjectedPaths paths = new ProjectedPaths();
        paths.children.put("", new TreeSet<>());
        long bytes = 0;
        for (Map.Entry<String, ProjectedFile> e : files.entrySet()) {
            List<String> parts = PathNames.split(e.getKey(), "projected file path");
            if (parts.getFirst().startsWith("..")) {
                throw new IllegalArgumentException("projected file path " + UserText.quote(e.getKey())
                        + " must not start with .. (kept for the writer's own names)");
            }
            bytes += e.getValue().content().length;
            if (bytes > MAX_BYTES) {
                throw new IllegalArgumentException(
                        "a projection may hold at most " + MAX_BYTES + " bytes; this one holds more");
            }
            String dir = "";
            for (String part : parts) {
                paths.children.computeIfAbsent(dir, d -> new TreeSet<>()).add(part);
                dir = dir.isEmpty() ? part : dir + "/" + part;
            }
            paths.files.put(String.join("/", parts), e.getValue());
        }
        for (String file : paths.files.keySet()) {
            if (paths.children.containsKey(file)) {
                throw new IllegalArgumentException(
                        "projected file path " + UserText.quote(file) + " is both a file and a directory");
            }
        }
        return paths;
    }

    /** The names directly in directory {@code dir} ({@code ""}: the top). */
    SortedSet<String> children(String dir) {
        return children.get(dir);
    }

    /** The file at {@code path}, or null when {@code path} is a directory. */
    ProjectedFile file(String path) {
        return files.get(path);
    }

    /** The user-visible names: the top-level ones, each a link {@code NAME -> ..data/NAME}. */
    SortedSet<String> topLevel() {
        return children.get("");
    }

    static String child(String dir, String name) {
        return dir.isEmpty() ? name : dir + "/" + name;
    }
}
