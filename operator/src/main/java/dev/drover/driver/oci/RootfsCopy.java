package dev.drover.driver.oci;

import dev.drover.fs.TreeRemover;
import dev.drover.image.ImageStore;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;

/**
 * A container's root filesystem as a copy of its image's, where the node cannot mount an overlay
 * ({@link RootfsMode#COPY}): made for each start, so a restarted task starts from the image again, and removed with
 * the task's bundle. The copy is the image's tree exactly: owners (when the agent runs as root, as the image's were
 * unpacked), modes with their set-user-ID and set-group-ID bits, modification times, hard links as links between
 * the copies, symbolic links made as they are and never followed. The image holds nothing else (unpacking refused
 * devices and FIFOs); anything else found there is refused.
 *
 * <p>Done here rather than by {@code cp -a}: the copy is bounded (what the image's pull noted it holds, and the disk's
 * free space, checked first), stops when the start's or prepare's deadline interrupts it, and fails the start with
 * a message rather than the container with an exit code; it runs in the agent, not in the task's cgroup, whose
 * memory limit would be charged for its page cache. A file's content is copied by the kernel, as {@code cp} has it
 * copied ({@link Files#copy}).
 */
final class RootfsCopy {

    /** As many entries as a bundle's removal takes ({@link OciDriver}). */
    static final int MAX_ENTRIES = 1_000_000;
    /** Levels below the root: less than a bundle's removal takes. */
    static final int MAX_DEPTH = 500;
    /** In the task's directory, beside the bundle: the copy {@link #prepare} made for the start that follows. */
    static final String PREPARED = ".drover-oci-rootfs";

    private static final boolean OWNERS = "root".equals(System.getProperty("user.name"));

    private RootfsCopy() {}

    /** Copies the image's root filesystem beside the task's bundle, for its next start; one made before goes. */
    static void prepare(ImageStore.Image image, Path taskDir) throws IOException {
        Path at = taskDir.resolve(PREPARED);
        discard(taskDir);
        Files.createDirectory(at);
        copy(image.rootfs(), image.bytes(), at);
    }

    /**
     * Puts the task's root filesystem in place at {@code rootfs}, the bundle's empty directory: the copy
     * {@link #prepare} made when {@code prepared} says it is of this image, else a fresh one.
     */
    static void place(ImageStore.Image image, Path taskDir, Path rootfs, boolean prepared) throws IOException {
        Path made = taskDir.resolve(PREPARED);
        if (prepared && Files.isDirectory(made, LinkOption.NOFOLLOW_LINKS)) {
            Files.delete(rootfs);
            Files.move(made, rootfs, StandardCopyOption.ATOMIC_MOVE);
            return;
        }
        discard(taskDir);
        copy(image.rootfs(), image.bytes(), rootfs);
    }

    /** Removes a copy {@link #prepare} made that no start took. */
    static void discard(Path taskDir) throws IOException {
        Path at = taskDir.resolve(PREPARED);
        if (Files.exists(at, LinkOption.NOFOLLOW_LINKS)) {
            TreeRemover.remove(at, MAX_ENTRIES, MAX_DEPTH + 12);
        }
    }

    /**
     * Copies the tree below {@code from} into {@code to}, an empty directory (whose own owner and mode stay: the root
     * of a container's filesystem is Drover's, as an overlay's upper directory is).
     *
     * @param bytes what the tree's files hold at most: the copy is refused before it begins when the disk under
     *     {@code to} has less free, and stops if the tree turns out to hold more
     */
    static void copy(Path from, long bytes, Path to) throws IOException {
        long free = Files.getFileStore(to).getUsableSpace();
        if (bytes > free) {
            throw new IOException("copying the image's root filesystem (" + mb(bytes) + ") would need more than the "
                    + mb(free) + " free on the disk of " + to);
        }
        Files.walkFileTree(from, EnumSet.noneOf(FileVisitOption.class), MAX_DEPTH, new Copier(from, to, bytes));
    }

    private static final class Copier extends SimpleFileVisitor<Path> {
        private final Path from;
        private final Path to;
        private final Map<Object, Path> linked = new HashMap<>();
        private long bytesLeft;
        private int entriesLeft = MAX_ENTRIES;

        Copier(Path from, Path to, long bytes) {
            this.from = from;
            this.to = to;
            this.bytesLeft = bytes;
        }

        private Path target(Path source) {
            return to.resolve(from.relativize(source).toString());
        }

        private void count(Path source) throws IOException {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedIOException("the copy of the image's root filesystem was interrupted");
            }
            if (--entriesLeft < 0) {
                throw new IOException("the image's root filesystem holds more than " + MAX_ENTRIES
                        + " entries, which Drover does not copy");
            }
        }

        @Override
        public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
            count(dir);
            if (!dir.equals(from)) {
                Files.createDirectory(target(dir));
            }
            return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path dir, IOException failed) throws IOException {
            if (failed != null) {
                throw failed;
            }
            if (!dir.equals(from)) {
                keep(unix(dir), target(dir), true); // after its entries: a read-only directory took them
            }
            return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
            count(file);
            Path target = target(file);
            if (attrs.isSymbolicLink()) {
                Files.createSymbolicLink(target, Files.readSymbolicLink(file));
                keep(unix(file), target, false);
            } else if (attrs.isRegularFile()) {
                Map<String, Object> unix = unix(file);
                boolean shared = (Integer) unix.get("nlink") > 1;
                Path first = shared ? linked.get(attrs.fileKey()) : null;
                if (first != null) {
                    Files.createLink(target, first); // one inode, as in the image
                    return FileVisitResult.CONTINUE;
                }
                bytesLeft -= attrs.size();
                if (bytesLeft < 0) {
                    throw new IOException("the image's root filesystem holds more than its pull noted ("
                            + from.relativize(file) + " takes it past that): remove the image from the node to have"
                            + " it pulled again");
                }
                Files.copy(file, target, LinkOption.NOFOLLOW_LINKS);
                keep(unix, target, true);
                if (shared) {
                    linked.put(attrs.fileKey(), target);
                }
            } else if (attrs.isDirectory()) {
                throw new IOException("the image's root filesystem is deeper than " + MAX_DEPTH
                        + " levels, which Drover does not copy");
            } else {
                throw new IOException(from.relativize(file) + " in the image's root filesystem is neither a file,"
                        + " a directory nor a link, which Drover does not copy");
            }
            return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            throw e;
        }
    }

    /** One {@code lstat}: what {@link #keep} copies, and the link count. */
    private static Map<String, Object> unix(Path source) throws IOException {
        return Files.readAttributes(
                source, "unix:uid,gid,mode,nlink,lastModifiedTime,lastAccessTime", LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Gives {@code target} the owner (when the agent is root) and, unless it is a link, the mode (set-ID bits included:
     * set after the owner, whose change clears them) and times of the source whose attributes are {@code unix}.
     */
    private static void keep(Map<String, Object> unix, Path target, boolean modeAndTimes) throws IOException {
        if (OWNERS) {
            Files.setAttribute(target, "unix:uid", unix.get("uid"), LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(target, "unix:gid", unix.get("gid"), LinkOption.NOFOLLOW_LINKS);
        }
        if (modeAndTimes) {
            Files.setAttribute(target, "unix:mode", (Integer) unix.get("mode") & 07777, LinkOption.NOFOLLOW_LINKS);
            Files.getFileAttributeView(target, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .setTimes((FileTime) unix.get("lastModifiedTime"), (FileTime) unix.get("lastAccessTime"), null);
        }
    }

    private static String mb(long bytes) {
        return (bytes + (1 << 20) - 1 >> 20) + " MiB";
    }
}
