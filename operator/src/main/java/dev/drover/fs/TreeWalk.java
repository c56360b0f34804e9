package dev.drover.fs;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;

/**
 * Visits, top down, a tree a task can write in without ever following a link: each directory is opened by descriptor
 * ({@link DirectoryHandle#openDirectoryIfOne}: {@code O_NOFOLLOW | O_DIRECTORY}), its entries listed through that
 * descriptor and reached by their one name inside it. A task that swaps a directory for a link to {@code /etc} while
 * the walk is under way leaves the walk in the directory it opened: the link is visited as a link, and nothing
 * behind it is reached, as it was with {@code Files.walk}, which opens each directory and each file by its whole path
 * again and so follows a link put in the middle of one. A directory swapped between its look and its opening is not
 * entered, and an entry removed or renamed while it is visited ({@link NoSuchFileException}) is passed over. At most
 * {@code maxDepth} levels are entered (two descriptors each while the walk is below it).
 */
public final class TreeWalk {

    /**
     * As deep as a path the kernel resolves can go (4 096 bytes of one-character names): the depth a walk by path
     * reached before, and the bound for a task's own trees.
     */
    public static final int PATH_DEPTH = 2048;

    /** What is done with each entry. */
    @FunctionalInterface
    public interface Visitor {

        /**
         * One entry: the directory that holds it, its name there (as the listing gives it, bytes and all: for the
         * handle's methods that take a {@code Path}), its path below the walk's root ({@code a/b}, for showing), and
         * its attributes as {@code lstat} saw them. Returns whether to enter it, when it is a directory.
         */
        boolean visit(DirectoryHandle dir, Path name, String path, PosixFileAttributes attrs) throws IOException;
    }

    private TreeWalk() {}

    /** Visits everything below {@code root} (not {@code root} itself), at most {@code maxDepth} levels down. */
    public static void walk(DirectoryHandle root, int maxDepth, Visitor visitor) throws IOException {
        walk(root, "", 1, maxDepth, visitor);
    }

    private static void walk(DirectoryHandle dir, String prefix, int depth, int maxDepth, Visitor visitor)
            throws IOException {
        if (depth > maxDepth) {
            throw new IOException(dir.shown() + " is more than " + maxDepth + " levels deep: refused");
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir.path())) {
            for (Path entry : entries) {
                Path name = entry.getFileName();
                PosixFileAttributes attrs = dir.lstat(name);
                if (attrs == null) {
                    continue; // removed since it was listed
                }
                String path = prefix + name;
                boolean enter;
                try {
                    enter = visitor.visit(dir, name, path, attrs);
                } catch (NoSuchFileException gone) {
                    continue; // removed or renamed while it was visited
                }
                if (enter && attrs.isDirectory()) {
                    DirectoryHandle sub = dir.openDirectoryIfOne(name);
                    if (sub == null) {
                        continue; // gone, or no longer a directory (a link, say): not entered
                    }
                    try (sub) {
                        walk(sub, path + "/", depth + 1, maxDepth, visitor);
                    }
                }
            }
        }
    }
}
