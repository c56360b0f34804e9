package dev.drover.allocwatcher;

import dev.drover.common.UserText;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The directory a snapshot is unpacked into, and the rules for what may be made
 * there. Nothing is ever reached through a link: each component of an entry's
 * path is looked at without following links ({@code lstat}) and must be a real
 * directory, made by this unpacking or there before it (the root only); files
 * are created new ({@code O_EXCL}, no following); symbolic links are made but
 * never gone through, and their targets are resolved against what is on disk,
 * link by link, both when they are made and once more when the stream is done
 * (a later entry can change what an earlier link's target means); hard links
 * name only regular files this unpacking wrote.
 *
 * <p>Paths are the entry's checked relative names ({@code alloc/data/x}).
 */
final class StagingTree {

    /** The kernel's own bound on links followed in one resolution. */
    private static final int MAX_LINK_HOPS = 40;

    private final Path root;
    /** Regular files written by this unpacking: the only things a hard link may name. */
    private final Set<String> files = new HashSet<>();
    /** Symbolic links made, with their targets, for the final check. */
    private final Map<String, String> links = new LinkedHashMap<>();

    /** {@code root} must be an empty directory (not a link to one): nothing in it was made by anyone else. */
    StagingTree(Path root) throws IOException {
        this.root = root.toAbsolutePath().normalize();
        if (!Files.isDirectory(this.root, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("the staging directory " + this.root + " is not a directory");
        }
        try (var inside = Files.list(this.root)) {
            if (inside.findAny().isPresent()) {
                throw new IOException("the staging directory " + this.root + " is not empty");
            }
        }
    }

    void directory(String path, int mode) throws IOException {
        parents(path);
        Path p = at(path);
        BasicFileAttributes a = lstat(p);
        if (a == null) {
            mkdir(p, path);
        } else if (!a.isDirectory()) {
            throw new SnapshotException("directory entry " + UserText.quote(path) + " collides with an earlier entry");
        }
        chmod(p, mode | 0700);
    }

    /** Writes {@code size} bytes of {@code content} to a new file. */
    void file(String path, int mode, InputStream content, long size) throws IOException {
        parents(path);
        Path p = at(path);
        try (OutputStream out = Files.newOutputStream(
                p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            if (content.transferTo(out) < size) {
                throw new SnapshotException("the snapshot ends in the middle of " + UserText.quote(path));
            }
        } catch (FileAlreadyExistsException e) {
            throw new SnapshotException("entry " + UserText.quote(path) + " appears twice");
        }
        files.add(path);
        chmod(p, mode | 0600);
    }

    void symlink(String path, String target) throws IOException {
        if (target.isEmpty() || target.indexOf('\0') >= 0 || target.startsWith("/") || !staysInside(path, target)) {
            throw pointsOut(path, target);
        }
        parents(path);
        try {
            Files.createSymbolicLink(at(path), Path.of(target));
        } catch (FileAlreadyExistsException e) {
            throw new SnapshotException("link " + UserText.quote(path) + " collides with an earlier entry");
        }
        links.put(path, target);
    }

    /** A second name for {@code source}, which must be a regular file written earlier in this stream. */
    void hardLink(String path, String source) throws IOException {
        BasicFileAttributes a = files.contains(source) ? lstat(at(source)) : null;
        if (a == null || !a.isRegularFile()) {
            throw new SnapshotException("hard link " + UserText.quote(path) + " -> \"" + UserText.bare(source)
                    + "\" does not name a file unpacked before it");
        }
        parents(path);
        try {
            Files.createLink(at(path), at(source));
        } catch (FileAlreadyExistsException e) {
            throw new SnapshotException("entry " + UserText.quote(path) + " appears twice");
        }
        files.add(path);
    }

    /** Resolves every link made once more, now that the tree is whole. */
    void checkLinks() throws IOException {
        for (Map.Entry<String, String> l : links.entrySet()) {
            if (!staysInside(l.getKey(), l.getValue())) {
                throw pointsOut(l.getKey(), l.getValue());
            }
        }
    }

    private static SnapshotException pointsOut(String path, String target) {
        return new SnapshotException(
                "link " + UserText.quote(path) + " -> \"" + UserText.bare(target) + "\" points out of the directory");
    }

    /**
     * Whether the link at {@code path} with {@code target} resolves inside the root, as the kernel would resolve it
     * now: component by component, following the links it meets on disk. A component that does not exist (yet)
     * ends what the disk can say; the rest is taken lexically, and {@link #checkLinks} looks again at the end.
     */
    private boolean staysInside(String path, String target) throws IOException {
        Deque<String> at = new ArrayDeque<>(List.of(path.split("/")));
        at.removeLast(); // a link's target is relative to its directory
        Deque<String> todo = new ArrayDeque<>(List.of(target.split("/")));
        int hops = 0;
        boolean onDisk = true;
        while (!todo.isEmpty()) {
            String part = todo.removeFirst();
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                if (at.isEmpty()) {
                    return false;
                }
                at.removeLast();
                continue;
            }
            at.addLast(part);
            if (!onDisk) {
                continue;
            }
            Path p = at(String.join("/", at));
            BasicFileAttributes a = lstat(p);
            if (a == null) {
                onDisk = false;
            } else if (a.isSymbolicLink()) {
                if (++hops > MAX_LINK_HOPS) {
                    return false; // a loop: the kernel gives up, and so do we
                }
                String next = Files.readSymbolicLink(p).toString();
                if (next.startsWith("/")) {
                    return false;
                }
                at.removeLast();
                List<String> parts = new ArrayList<>(List.of(next.split("/")));
                parts.addAll(todo);
                todo = new ArrayDeque<>(parts);
            } else if (!a.isDirectory() && !todo.isEmpty()) {
                return true; // a file in the middle of a path: the kernel resolves it nowhere
            }
        }
        return true;
    }

    /** Makes the directories above {@code path}; each one there must be a real directory, never a link or a file. */
    private void parents(String path) throws IOException {
        String[] parts = path.split("/");
        StringBuilder prefix = new StringBuilder();
        for (int i = 0; i < parts.length - 1; i++) {
            if (i > 0) {
                prefix.append('/');
            }
            prefix.append(parts[i]);
            Path p = at(prefix.toString());
            BasicFileAttributes a = lstat(p);
            if (a == null) {
                mkdir(p, path);
            } else if (a.isSymbolicLink()) {
                throw new SnapshotException("entry " + UserText.quote(path) + " goes through the link " + prefix);
            } else if (!a.isDirectory()) {
                throw new SnapshotException("entry " + UserText.quote(path) + " goes through the file " + prefix);
            }
        }
    }

    /** {@code mkdir}: makes a new directory or fails; it never follows a link in the last component. */
    private static void mkdir(Path p, String path) throws IOException {
        try {
            Files.createDirectory(p);
        } catch (FileAlreadyExistsException e) {
            throw new SnapshotException("entry " + UserText.quote(path) + " collides with something made meanwhile");
        }
    }

    private Path at(String path) {
        return root.resolve(path);
    }

    private static BasicFileAttributes lstat(Path p) throws IOException {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /** Sets the mode of what is at {@code p}, which is not a link: the view is taken without following links. */
    private static void chmod(Path p, int mode) throws IOException {
        Set<PosixFilePermission> perms = EnumSet.noneOf(PosixFilePermission.class);
        for (PosixFilePermission perm : PosixFilePermission.values()) {
            if ((mode & (1 << (8 - perm.ordinal()))) != 0) {
                perms.add(perm);
            }
        }
        Files.getFileAttributeView(p, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setPermissions(perms);
    }
}
