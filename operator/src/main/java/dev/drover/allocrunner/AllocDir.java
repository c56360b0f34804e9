package dev.drover.allocrunner;

import dev.drover.allocwatcher.Snapshots;
import dev.drover.api.v1alpha1.Names;
import dev.drover.fs.TreeRemover;
import dev.drover.fs.TreeWalk;
import dev.drover.state.AllocId;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
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

    /** A task's {@code secrets}: its owner's only, from the {@code mkdir} on. */
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

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
            Path shared = shared();
            createDirectories(shared);
            createChild(shared.resolve("data"));
            createChild(shared.resolve("logs"));
            createChild(shared.resolve("tmp"));
        });
    }

    /** Creates a task's directories (idempotent); {@code secrets} is readable by its owner only. */
    public void buildTask(String name) throws IOException {
        Path dir = taskDir(name);
        withBuildLock(() -> {
            createDirectories(dir);
            createChild(dir.resolve("local"));
            createChild(dir.resolve("tmp"));
            Path secrets = dir.resolve("secrets");
            if (!createChild(secrets, OWNER_ONLY)) {
                Files.setPosixFilePermissions(secrets, OWNER_ONLY.value());
            }
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

    /**
     * Creates {@code dir} and what is missing above it, refusing to go through any link below the data dir (it could
     * lead anywhere). Each part that is there is looked at once without following it; below the first part this
     * creates, each is only made (one {@code mkdir} each: a burst of allocations makes thousands).
     */
    private void createDirectories(Path dir) throws IOException {
        requireInside(base, dir);
        Path at = base;
        boolean making = false;
        for (Path part : base.relativize(dir)) {
            at = at.resolve(part);
            if (making) {
                createChild(at);
            } else if (!requireDirectoryOrAbsent(at)) {
                if (at.getParent().equals(base)) {
                    Files.createDirectories(base); // the data dir's allocs/, before its first namespace
                }
                making = createChild(at);
            }
        }
    }

    /**
     * Makes {@code dir} in a parent that is a directory; true when this made it, false when a directory was already
     * there. Anything else there (a link, a file) is refused.
     */
    private static boolean createChild(Path dir, FileAttribute<?>... attributes) throws IOException {
        try {
            Files.createDirectory(dir, attributes);
            return true;
        } catch (FileAlreadyExistsException there) {
            if (!requireDirectoryOrAbsent(dir)) {
                throw there; // made and removed again meanwhile: not ours to fight over
            }
            return false;
        }
    }

    /** True when {@code p} is a directory, false when nothing is there; refuses a link or another kind of file. */
    private static boolean requireDirectoryOrAbsent(Path p) throws IOException {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException absent) {
            return false;
        }
        if (a.isSymbolicLink()) {
            throw new IllegalArgumentException(
                    p + " is a link; refusing to create directories through it, as it could lead outside the data dir");
        }
        if (!a.isDirectory()) {
            throw new FileAlreadyExistsException(p.toString(), null, "not a directory");
        }
        return true;
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
