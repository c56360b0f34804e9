package dev.drover.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Removes a tree a task can write in without ever following a link: each directory is opened by descriptor
 * ({@link DirectoryHandle#openDirectory}: {@code O_NOFOLLOW | O_DIRECTORY}) and its entries removed by name inside it
 * ({@code unlink}/{@code rmdir}, which do not follow their last component). A directory the task swapped for a link
 * to {@code /} meanwhile fails to open as a directory and loses only its link. The work is bounded ({@link
 * #MAX_ENTRIES} entries, {@link #MAX_DEPTH} levels): a task that keeps adding files cannot keep the agent here.
 */
public final class TreeRemover {

    public static final int MAX_ENTRIES = 100_000;
    public static final int MAX_DEPTH = 64;

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

    /** {@link #remove(DirectoryHandle, String)} with other bounds. */
    public static void remove(DirectoryHandle parent, String name, int maxEntries, int maxDepth) throws IOException {
        new TreeRemover(maxEntries, maxDepth).removeEntry(parent, name, 0);
    }

    private void removeEntry(DirectoryHandle parent, String name, int depth) throws IOException {
        if (--left < 0 || depth > maxDepth) {
            throw new IOException("cannot remove " + parent.shown(name) + ": more than " + maxEntries + " entries or "
                    + maxDepth + " levels");
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

    private void removeChildren(DirectoryHandle parent, String name, int depth) throws IOException {
        DirectoryHandle dir;
        try {
            dir = parent.openDirectory(name);
        } catch (NoSuchFileException gone) {
            return;
        } catch (IOException swapped) {
            return; // no longer a directory (a link, say): only the name goes, in the caller
        }
        try (dir) {
            for (String child : dir.list(Math.max(left, 0))) {
                removeEntry(dir, child, depth + 1);
            }
        }
    }
}
