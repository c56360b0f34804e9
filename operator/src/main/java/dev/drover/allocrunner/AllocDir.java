package dev.drover.allocrunner;

import dev.drover.allocwatcher.Snapshots;
import dev.drover.api.v1alpha1.Names;
import dev.drover.fs.TreeRemover;
import dev.drover.fs.TreeWalk;
import dev.drover.state.AllocId;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * An allocation's directory under the agent's data dir:
 * <pre>
 *   allocs/NAMESPACE/NAME/alloc/{data,logs,tmp}      shared by the tasks
 *   allocs/NAMESPACE/NAME/TASK/{local,secrets,tmp}   one per task; secrets is 0700
 * </pre>
 * Names become paths here, so every name is checked (Kubernetes name rules, no
 * '/', '.' or '..') and every path is checked to stay inside the data dir. Safe
 * for concurrent use: building directories runs concurrently; destroying and
 * migrating exclude everything else.
 */
public final class AllocDir {

    private final Path base;
    private final Path root;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private AllocDir(Path base, Path root) {
        this.base = base;
        this.root = root;
    }

    /** The directory of {@code id} under {@code dataDir}; nothing is created yet. */
    public static AllocDir of(Path dataDir, AllocId id) {
        Path base = dataDir.toAbsolutePath().normalize().resolve("allocs");
        Path root = base.resolve(id.namespace()).resolve(id.name()).normalize();
        requireInside(base, root);
        return new AllocDir(base, root);
    }

    /**
     * The allocations that have a directory under {@code dataDir}; entries that name no allocation (and links,
     * which the agent never makes there) are not its own and are left alone.
     */
    public static List<AllocId> all(Path dataDir) throws IOException {
        Path base = dataDir.toAbsolutePath().normalize().resolve("allocs");
        List<AllocId> found = new ArrayList<>();
        if (!Files.isDirectory(base, LinkOption.NOFOLLOW_LINKS)) {
            return found;
        }
        try (DirectoryStream<Path> namespaces = Files.newDirectoryStream(base)) {
            for (Path ns : namespaces) {
                if (!Files.isDirectory(ns, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                try (DirectoryStream<Path> names = Files.newDirectoryStream(ns)) {
                    for (Path name : names) {
                        if (Files.isDirectory(name, LinkOption.NOFOLLOW_LINKS)) {
                            try {
                                found.add(new AllocId(
                                        ns.getFileName().toString(),
                                        name.getFileName().toString()));
                            } catch (IllegalArgumentException notAnAllocation) {
                                // not a name the agent would have made
                            }
                        }
                    }
                }
            }
        }
        return found;
    }

    public Path root() {
        return root;
    }

    /** {@code alloc/}: shared by every task of the allocation. */
    public Path shared() {
        return root.resolve("alloc");
    }

    public Path data() {
        return shared().resolve("data");
    }

    public Path logs() {
        return shared().resolve("logs");
    }

    /** The directory of task {@code name}; throws for a name that is not a DNS-1123 label. */
    public Path taskDir(String name) {
        if (!Names.isLabel(name) || name.equals("alloc")) {
            throw new IllegalArgumentException("task name '" + name + "' cannot name a directory: use a DNS-1123 label"
                    + " (lower-case letters, digits and '-', at most 63) other than 'alloc'");
        }
        Path dir = root.resolve(name).normalize();
        requireInside(root, dir);
        return dir;
    }

    public Path taskLocal(String name) {
        return taskDir(name).resolve("local");
    }

    public Path taskSecrets(String name) {
        return taskDir(name).resolve("secrets");
    }

    /** Creates the shared directories (idempotent). */
    public void build() throws IOException {
        withBuildLock(() -> {
            for (Path p : List.of(data(), logs(), shared().resolve("tmp"))) {
                createDirectories(p);
            }
        });
    }

    /** Creates a task's directories (idempotent); {@code secrets} is readable by its owner only. */
    public void buildTask(String name) throws IOException {
        Path dir = taskDir(name);
        withBuildLock(() -> {
            createDirectories(dir.resolve("local"));
            createDirectories(dir.resolve("tmp"));
            Path secrets = dir.resolve("secrets");
            createDirectories(secrets);
            Files.setPosixFilePermissions(secrets, PosixFilePermissions.fromString("rwx------"));
        });
    }

    /**
     * Moves the previous allocation's {@code alloc/data} and each named task's
     * {@code local/} here (same node: a rename), replacing what is here.
     */
    public void migrateFrom(AllocDir previous, List<String> tasks) throws IOException {
        moveIn(previous.root, tasks);
    }

    /**
     * A new, empty directory inside this one (on the same file system, outside every task's view) to unpack a
     * snapshot into before {@link #adopt} moves it into place.
     */
    public Path newStaging() throws IOException {
        Path staging = root.resolve(".snapshot");
        if (Files.exists(staging, LinkOption.NOFOLLOW_LINKS)) {
            deleteTree(staging); // left by an agent that died while unpacking
        }
        createDirectories(staging);
        return staging;
    }

    /**
     * Moves what a snapshot unpacked into {@code staging} ({@code alloc/data}, {@code TASK/local}) into place,
     * replacing what is here, and removes the staging directory.
     */
    public void adopt(Path staging, List<String> tasks) throws IOException {
        requireInside(root, staging);
        moveIn(staging, tasks);
        discard(staging);
    }

    /** Removes a staging directory (a snapshot that could not be unpacked whole). */
    public void discard(Path staging) throws IOException {
        requireInside(root, staging);
        if (Files.exists(staging, LinkOption.NOFOLLOW_LINKS)) {
            deleteTree(staging);
        }
    }

    /**
     * Writes {@code alloc/data} and each named task's {@code local/} as a tar stream ({@link Snapshots#pack}). It
     * takes no lock: a destroy meanwhile cuts the stream, which the reader refuses as incomplete.
     */
    public void snapshot(List<String> tasks, OutputStream out) throws IOException {
        Snapshots.pack(root, tasks, out);
    }

    private void moveIn(Path fromRoot, List<String> tasks) throws IOException {
        lock.writeLock().lock();
        try {
            move(fromRoot.resolve("alloc").resolve("data"), data());
            for (String task : tasks) {
                move(fromRoot.resolve(taskDir(task).getFileName()).resolve("local"), taskLocal(task));
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Removes the whole directory; links inside are removed, never followed. */
    public void destroy() throws IOException {
        lock.writeLock().lock();
        try {
            if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            deleteTree(root);
        } finally {
            lock.writeLock().unlock();
        }
    }

    private void move(Path from, Path to) throws IOException {
        if (!Files.isDirectory(from, LinkOption.NOFOLLOW_LINKS)) {
            return; // nothing to carry over
        }
        createDirectories(to.getParent());
        if (Files.exists(to, LinkOption.NOFOLLOW_LINKS)) {
            deleteTree(to);
        }
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
    }

    /** The most entries one allocation's directory may hold and still be removed (far more than any task makes). */
    private static final int MAX_REMOVED = 10_000_000;

    /**
     * Deletes a tree whose parent is the agent's, by descriptor ({@link TreeRemover}): links are removed, never
     * followed, even one a task's process puts in place of a directory while the tree is removed.
     */
    private static void deleteTree(Path dir) throws IOException {
        TreeRemover.remove(dir, MAX_REMOVED, TreeWalk.PATH_DEPTH);
    }

    /** Creates {@code dir}, refusing to go through any link below the data dir (it could lead anywhere). */
    private void createDirectories(Path dir) throws IOException {
        requireInside(base, dir);
        Path at = base;
        for (Path part : base.relativize(dir)) {
            at = at.resolve(part);
            if (Files.isSymbolicLink(at)) {
                throw new IllegalArgumentException(at + " is a link; refusing to create directories through it,"
                        + " as it could lead outside " + base);
            }
        }
        Files.createDirectories(dir);
    }

    private interface IoAction {
        void run() throws IOException;
    }

    private void withBuildLock(IoAction action) throws IOException {
        lock.readLock().lock();
        try {
            action.run();
        } finally {
            lock.readLock().unlock();
        }
    }

    private static void requireInside(Path parent, Path child) {
        if (!child.normalize().startsWith(parent.normalize())) {
            throw new IllegalArgumentException(child + " is outside " + parent + "; refusing to use it");
        }
    }
}
