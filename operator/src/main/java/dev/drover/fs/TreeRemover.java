package dev.drover.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;

/**
 * Removes a tree a task can write in without ever following a link: each directory is opened by descriptor
 * ({@link DirectoryHandle#openDirectoryIfOne}: {@code O_NOFOLLOW | O_DIRECTORY}) and its entries removed by name inside it
 * ({@code unlink}/{@code rmdir}, which do not follow their last component). A directory the task swapped for a link
 * to {@code /} meanwhile fails to open as a directory and loses only its link. Names are taken as the listing gives
 * them, bytes and all (a task may make names that are not valid UTF-8), a few thousand at a time. The work is
 * bounded ({@link #MAX_ENTRIES} entries, {@link #MAX_DEPTH} levels, or the caller's): a task that keeps adding files
 * cannot keep the agent here.
 */
public final class TreeRemover {

    public static final int MAX_ENTRIES = 100_000;
    public static final int MAX_DEPTH = 64;
    /** The most names of one directory held at once. */
    private static final int BATCH = 4096;

    private final int maxEntries;
    private final int maxDepth;
    private int left;

    private TreeRemover(int maxEntries, int maxDepth) {
        this.maxEntries = maxEntries;
        this.maxDepth = maxDepth;
        this.left = maxEntries;
    }

    /** Removes {@code name} from {@code parent}, and all below it when it is a directory; nothing there is fine. */
    public static void remove(DirectoryHandle parent, String name) throws IOException {
        remove(parent, name, MAX_ENTRIES, MAX_DEPTH);
    }

    /**
     * Removes the tree at {@code path}, whose parent the agent owns: the parent is held by descriptor
     * ({@link DirectoryHandle#open}) and the tree removed in it as {@link #remove(DirectoryHandle, String, int, int)}
     * does, so a link put in its place is removed, never followed.
     */
    public static void remove(Path path, int maxEntries, int maxDepth) throws IOException {
        try (DirectoryHandle parent = DirectoryHandle.open(path.getParent())) {
            remove(parent, path.getFileName().toString(), maxEntries, maxDepth);
        }
    }

    /** {@link #remove(DirectoryHandle, String)} with other bounds. */
    public static void remove(DirectoryHandle parent, String name, int maxEntries, int maxDepth) throws IOException {
        new TreeRemover(maxEntries, maxDepth).removeEntry(parent, Path.of(PathNames.component(name)), 0);
    }

    private void removeEntry(DirectoryHandle parent, Path name, int depth) throws IOException {
        if (--left < 0 || depth > maxDepth) {
            throw new IOException("cannot remove " + parent.shown().resolve(name) + ": more than " + maxEntries
                    + " entries or " + maxDepth + " levels");
        }
        BasicFileAttributes a = parent.lstat(name);
        if (a == null) {
            return;
        }
        if (a.isDirectory()) {
            removeChildren(parent, name, depth);
        }
        Files.deleteIfExists(parent.resolve(name)); // lstat, then unlink or rmdir: neither follows a link
    }

    /** Removes what the directory {@code name} holds, {@link #BATCH} names at a time (a directory may hold millions). */
    private void removeChildren(DirectoryHandle parent, Path name, int depth) throws IOException {
        DirectoryHandle dir = parent.openDirectoryIfOne(name);
        if (dir == null) {
            return; // gone, or no longer a directory (a link, say): only the name goes, in the caller
        }
        try (dir) {
            for (List<Path> batch = dir.entries(BATCH); !batch.isEmpty(); batch = dir.entries(BATCH)) {
                for (Path child : batch) {
                    removeEntry(dir, child, depth + 1);
                }
            }
        }
    }
}
