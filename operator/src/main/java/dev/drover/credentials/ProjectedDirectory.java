package dev.drover.credentials;

import dev.drover.common.UserText;
import dev.drover.fs.DirectoryHandle;
import dev.drover.fs.PathNames;
import dev.drover.fs.TreeRemover;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.function.Consumer;

/**
 * Projects a Secret's or ConfigMap's files into a directory of a task ({@code secrets/db}, {@code local/app}) and
 * keeps them current as kubelet's AtomicWriter does for volumes: the files live in a hidden timestamped data
 * directory ({@code ..2026_11_25_18_30_00.123456789}), {@code ..data} is a link to it, and each top-level name is a
 * link {@code NAME -> ..data/NAME}. An update writes a new data directory, adds links for new names, swaps
 * {@code ..data} by {@code rename(2)} (so a reader going through {@code ..data} or a top-level name sees the old set or
 * the new one, whole), removes links to names that went, then the old data directory.
 *
 * <p>The task owns the directory the projection is in and so can change anything in it at any moment. Why each step
 * is still safe for an agent running as root: every directory below the (agent-owned) task directory is opened by
 * descriptor without following links and refused if it is anything but a directory ({@link DirectoryHandle}); each
 * later operation acts on one name inside such a descriptor and does not follow it: {@code mkdir} and {@code
 * symlink} fail on anything already there, {@code rename} replaces a name without following it (and fails on a
 * directory), {@code unlink}/{@code rmdir} remove the name only, {@code readlink}/{@code lstat} only look. A new data
 * directory is root's and 0700 until complete, and must still be root's when opened; files are chown'ed through their
 * own descriptors ({@link DataDirectory}). The old data directory is removed by {@link TreeRemover}: a task that
 * replaced it with a link to {@code /} loses only its link. The links themselves stay root's (changing a name's owner
 * by name would follow a hard link), which leaves the task free to remove them, as it may its own files. The worst a
 * task can do is spoil its own projection, which then fails with an IOException; a data directory that failed to go
 * live is removed at once (by {@link TreeRemover} too), so an update retried each poll leaves nothing behind. Updates
 * of one projection must not run at once (the caller serializes them, as kubelet does).
 */
public final class ProjectedDirectory {

    /** The link to the current data directory, the one name a watcher of updates needs. */
    public static final String DATA = "..data";

    /** Owner-only, for a Secret's directories. */
    public static final int OWNER_ONLY = 0700;

    private static final String DATA_TMP = "..data_tmp";
    private static final String LINK_TMP = "..link_tmp";
    private static final int NAME_ATTEMPTS = 8;
    private static final int MAX_ENTRIES = 10_000;
    private static final DateTimeFormatter STAMP =
            DateTimeFormatter.ofPattern("'..'yyyy_MM_dd_HH_mm_ss.").withZone(ZoneOffset.UTC);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Clock clock;
    private final Consumer<String> stages;

    public ProjectedDirectory(Clock clock) {
        this(clock, stage -> {});
    }

    /** With {@code stages} told {@code "written"} before the swap and {@code "swapped"} before the cleanup (tests). */
    ProjectedDirectory(Clock clock, Consumer<String> stages) {
        this.clock = clock;
        this.stages = stages;
    }

    /**
     * Makes {@code dir} (relative to the agent-owned {@code taskDir}: {@code "secrets/db"}) hold exactly {@code
     * files} (relative path, e.g. {@code conf/app.yaml}, to content and mode), creating it if missing. Files and
     * directories belong to the owner of the directory {@code dir} is in; directories get {@code dirMode}.
     *
     * @return whether anything changed: false when the content was already there (no new data directory, no swap)
     * @throws IllegalArgumentException when a path, a mode or the size is refused, saying which
     * @throws IOException when a directory on the way is a link or no directory, or the task spoiled the projection
     */
    public boolean update(Path taskDir, String dir, Map<String, ProjectedFile> files, int dirMode) throws IOException {
        ProjectedPaths paths = ProjectedPaths.of(files);
        DirectoryHandle.permissions(dirMode);
        List<String> parts = PathNames.split(dir, "projected directory");
        String leaf = parts.getLast();
        try (DirectoryHandle task = DirectoryHandle.open(taskDir);
                DirectoryHandle parent = task.openDirectories(parts.subList(0, parts.size() - 1));
                DirectoryHandle target = openOrCreate(parent, leaf)) {
            int uid = parent.uid();
            int gid = parent.gid();
            target.own(uid, gid, dirMode);
            Optional<String> old = currentDataDirectory(target);
            if (old.isPresent() && unchanged(target, old.get(), paths, uid, dirMode)) {
                linkVisibleNames(target, paths.topLevel());
                return false;
            }
            String fresh = newDataDirectory(target, paths, task.uid(), uid, gid, dirMode);
            try {
                linkVisibleNames(target, paths.topLevel());
                stages.accept("written");
                swap(target, fresh);
            } catch (IOException | RuntimeException e) {
                discard(target, fresh, e); // never live: an update failing each poll must leave nothing behind
                throw e;
            }
            stages.accept("swapped"); // from here the fresh directory is the live one: kept whatever fails
            unlinkGoneNames(target, paths.topLevel());
            if (old.isPresent()) {
                TreeRemover.remove(target, old.get());
            }
            return true;
        }
    }

    /** Removes the projection {@code dir} (relative to {@code taskDir}) and all it holds; none there is fine. */
    public void remove(Path taskDir, String dir) throws IOException {
        List<String> parts = PathNames.split(dir, "projected directory");
        try (DirectoryHandle task = DirectoryHandle.open(taskDir);
                DirectoryHandle parent = task.openDirectories(parts.subList(0, parts.size() - 1))) {
            TreeRemover.remove(parent, parts.getLast());
        }
    }

    private static DirectoryHandle openOrCreate(DirectoryHandle parent, String name) throws IOException {
        if (parent.lstat(name) == null) {
            try {
                Files.createDirectory(
                        parent.resolve(name), PosixFilePermissions.asFileAttribute(DirectoryHandle.permissions(0700)));
            } catch (FileAlreadyExistsException raced) {
                // made meanwhile: opened below like any other
            }
        }
        return parent.openDirectory(name);
    }

    /** The data directory {@code ..data} names, if it names one that may be ours (a hidden single name). */
    private static Optional<String> currentDataDirectory(DirectoryHandle target) throws IOException {
        String name;
        try {
            name = Files.readSymbolicLink(target.resolve(DATA)).toString();
        } catch (NoSuchFileException | NotLinkException e) {
            return Optional.empty();
        }
        boolean plausible = name.startsWith("..")
                && !name.equals("..")
                && !name.contains("/")
                && !name.equals(DATA)
                && !name.equals(DATA_TMP)
                && !name.equals(LINK_TMP)
                && name.length() <= PathNames.MAX_NAME_BYTES;
        return plausible ? Optional.of(name) : Optional.empty();
    }

    private static boolean unchanged(DirectoryHandle target, String old, ProjectedPaths paths, int uid, int dirMode)
            throws IOException {
        try (DirectoryHandle data = target.openDirectory(old)) {
            return DataDirectory.matches(data, paths, uid, dirMode);
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException notADirectory) {
            return false;
        }
    }

    private String newDataDirectory(
            DirectoryHandle target, ProjectedPaths paths, int agentUid, int uid, int gid, int dirMode)
            throws IOException {
        for (int i = 0; i < NAME_ATTEMPTS; i++) {
            String name = STAMP.format(clock.instant()) + String.format("%09d", RANDOM.nextInt(1_000_000_000));
            try {
                Files.createDirectory(
                        target.resolve(name), PosixFilePermissions.asFileAttribute(DirectoryHandle.permissions(0700)));
            } catch (FileAlreadyExistsException taken) {
                continue;
            }
            try (DirectoryHandle data = target.openDirectory(name)) {
                if (data.uid() != agentUid) {
                    throw new IOException(target.shown(name) + " was replaced while being written: refused");
                }
                DataDirectory.write(data, paths, uid, gid, dirMode);
                return name;
            } catch (IOException | RuntimeException e) {
                discard(target, name, e);
                throw e;
            }
        }
        throw new IOException("cannot make a data directory in " + target.shown() + ": " + NAME_ATTEMPTS
                + " names in a row were taken");
    }

    /**
     * Removes the data directory {@code name} that never went live, by {@link TreeRemover} (whatever the task put at
     * the name meanwhile, a link to {@code /} say, loses only its name); a failure to remove it is added to {@code failure},
     * which stays the error the caller sees.
     */
    private static void discard(DirectoryHandle target, String name, Exception failure) {
        try {
            TreeRemover.remove(target, name);
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /** Each top-level name a link {@code NAME -> ..data/NAME}; anything else at the name is replaced by one. */
    private static void linkVisibleNames(DirectoryHandle target, SortedSet<String> names) throws IOException {
        for (String name : names) {
            Path wanted = Path.of(DATA, name);
            BasicFileAttributes a = target.lstat(name);
            if (a != null && a.isSymbolicLink() && wanted.equals(Files.readSymbolicLink(target.resolve(name)))) {
                continue;
            }
            if (a == null) {
                try {
                    Files.createSymbolicLink(target.resolve(name), wanted);
                    continue;
                } catch (FileAlreadyExistsException raced) {
                    // made meanwhile: replaced below
                }
            }
            replaceWithLink(target, LINK_TMP, name, wanted);
        }
    }

    private static void swap(DirectoryHandle target, String fresh) throws IOException {
        replaceWithLink(target, DATA_TMP, DATA, Path.of(fresh));
    }

    /** Puts a link to {@code to} at {@code name} by {@code rename(2)} of a new link {@code temp}: atomic. */
    private static void replaceWithLink(DirectoryHandle target, String temp, String name, Path to) throws IOException {
        TreeRemover.remove(target, temp); // a leftover, or a task's: removed without following
        Files.createSymbolicLink(target.resolve(temp), to);
        try {
            Files.move(target.resolve(temp), target.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            Files.deleteIfExists(target.resolve(temp));
            String why = e instanceof FileSystemException f && f.getReason() != null
                    ? f.getReason() // not its paths, which name a descriptor in /proc
                    : e.getMessage();
            throw new IOException(
                    "cannot put a link at " + UserText.bare(target.shown(name).toString())
                            + " (is a directory there?): " + why,
                    e);
        }
    }

    /** Removes the links into {@code ..data} whose names went; the task's own files are left alone. */
    private static void unlinkGoneNames(DirectoryHandle target, SortedSet<String> names) throws IOException {
        for (String name : target.list(MAX_ENTRIES)) {
            if (name.startsWith("..") || names.contains(name)) {
                continue;
            }
            BasicFileAttributes a = target.lstat(name);
            if (a != null
                    && a.isSymbolicLink()
                    && Files.readSymbolicLink(target.resolve(name)).startsWith(DATA)) {
                Files.deleteIfExists(target.resolve(name)); // unlink: the link, never what it names
            }
        }
    }
}
