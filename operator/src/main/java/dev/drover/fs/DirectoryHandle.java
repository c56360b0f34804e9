package dev.drover.fs;

import static dev.drover.fs.Syscalls.AT_FDCWD;
import static dev.drover.fs.Syscalls.EEXIST;
import static dev.drover.fs.Syscalls.ELOOP;
import static dev.drover.fs.Syscalls.ENOENT;
import static dev.drover.fs.Syscalls.ENOTDIR;
import static dev.drover.fs.Syscalls.O_CREAT;
import static dev.drover.fs.Syscalls.O_DIRECTORY;
import static dev.drover.fs.Syscalls.O_EXCL;
import static dev.drover.fs.Syscalls.O_NOFOLLOW;
import static dev.drover.fs.Syscalls.O_NONBLOCK;
import static dev.drover.fs.Syscalls.O_WRONLY;
import static dev.drover.fs.Syscalls.closeFd;
import static dev.drover.fs.Syscalls.openat;

import dev.drover.common.UserText;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * A directory held by an open descriptor that was opened without following a link, so that what is done in it
 * happens in <em>that</em> directory even if a task renames it or puts a link at its name meanwhile.
 *
 * <p>Java's own {@code SecureDirectoryStream} is not enough here: it opens a sub-directory with {@code O_RDONLY} and
 * no {@code O_DIRECTORY} (a FIFO a task put at the name blocks the agent's thread for good), and it changes a file's
 * owner by opening the file again by name (a hard link a task put at the name would give the task the linked file,
 * {@code /etc/shadow} on the same file system). So the descriptors are opened here with {@code openat(2)}
 * ({@code O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK}), and the rest is done through {@code /proc/self/fd/N}: the kernel
 * resolves that magic link to the open directory itself, and then only the last component, a single validated name,
 * is looked up in it. Operations on that name never follow it ({@code mkdir}, {@code symlink}, {@code rename},
 * {@code unlink}, {@code lstat}, {@code readlink}, {@code lchown}, {@code O_CREAT|O_EXCL}, {@code O_NOFOLLOW}); the
 * mode is changed only on a file the agent created itself, through that file's own descriptor ({@link Syscalls} makes
 * the calls Java has no API for). Linux only (x86-64, arm64), as the agent is. Shared by what writes a task's
 * credentials, gives a task its directories ({@link TreeWalk}), packs them for migration, and removes them
 * ({@link TreeRemover}).
 */
public final class DirectoryHandle implements AutoCloseable {

    private final int fd;
    /** Where the directory was when opened: for messages only, never used to reach it. */
    private final Path shown;

    private DirectoryHandle(int fd, Path shown) {
        this.fd = fd;
        this.shown = shown;
    }

    /** Opens {@code dir}, a path the agent owns all the way (the task directory); its last component is not followed. */
    public static DirectoryHandle open(Path dir) throws IOException {
        int d = openat(AT_FDCWD, dir.toAbsolutePath().toString(), O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK, 0);
        if (d < 0) {
            throw notADirectory(dir, -d, attributes(dir));
        }
        return new DirectoryHandle(d, dir);
    }

    /** Opens the sub-directory {@code name}; a link, a FIFO or anything else at the name is refused, never followed. */
    public DirectoryHandle openDirectory(String name) throws IOException {
        int d = openat(fd, PathNames.component(name), O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK, 0);
        if (d < 0) {
            throw notADirectory(shown.resolve(name), -d, lstat(name));
        }
        return new DirectoryHandle(d, shown.resolve(name));
    }

    /**
     * Opens the sub-directory {@code name} (a name as {@link #entries} lists it) as {@link #openDirectory} does; null
     * when, as it is opened, there is nothing at the name or something other than a directory (a link, a file: what
     * a task swapped in).
     */
    public DirectoryHandle openDirectoryIfOne(Path name) throws IOException {
        int d = openat(fd, bytesOf(name), O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK, 0);
        if (d == -ENOENT || d == -ENOTDIR || d == -ELOOP) {
            return null;
        }
        if (d < 0) {
            throw new IOException("cannot open " + shown.resolve(name) + ": errno " + -d);
        }
        return new DirectoryHandle(d, shown.resolve(name));
    }

    /** Opens {@code names} (none: this one again) one below the other, each as {@link #openDirectory} does. */
    public DirectoryHandle openDirectories(List<String> names) throws IOException {
        int d = openat(fd, ".", O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK, 0);
        if (d < 0) {
            throw new IOException("cannot open " + shown + " again: errno " + -d);
        }
        DirectoryHandle at = new DirectoryHandle(d, shown);
        for (String name : names) {
            try (DirectoryHandle parent = at) {
                at = parent.openDirectory(name);
            }
        }
        return at;
    }

    /** This directory itself, as a path the kernel resolves to the open descriptor (follow it: it is the directory). */
    public Path path() {
        return Path.of("/proc/self/fd", Integer.toString(fd));
    }

    /** The entry {@code name} of this directory, for operations that do not follow their last component. */
    public Path resolve(String name) {
        return path().resolve(PathNames.component(name));
    }

    /**
     * The entry {@code name} (a name as {@link #entries} lists it: its bytes kept even when they are no valid name in
     * the JVM's encoding), for operations that do not follow their last component.
     */
    public Path resolve(Path name) {
        bytesOf(name); // one plain name, nothing that climbs out
        return path().resolve(name);
    }

    /** Where the entry {@code name} was when this directory was opened: for messages. */
    public Path shown(String name) {
        return shown.resolve(name);
    }

    public Path shown() {
        return shown;
    }

    public int uid() throws IOException {
        return (Integer) Files.getAttribute(path(), "unix:uid");
    }

    public int gid() throws IOException {
        return (Integer) Files.getAttribute(path(), "unix:gid");
    }

    /** The entry's attributes, the entry itself (a link is reported as a link); null when there is none. */
    public PosixFileAttributes lstat(String name) throws IOException {
        return lstatOf(resolve(name));
    }

    /** As {@link #lstat(String)}, of a name as {@link #entries} lists it. */
    public PosixFileAttributes lstat(Path name) throws IOException {
        return lstatOf(resolve(name));
    }

    private static PosixFileAttributes lstatOf(Path entry) throws IOException {
        try {
            return Files.readAttributes(entry, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /** The number of hard links of the entry {@code name} itself (a link's own). */
    public int links(Path name) throws IOException {
        return ((Number) Files.getAttribute(resolve(name), "unix:nlink", LinkOption.NOFOLLOW_LINKS)).intValue();
    }

    /** Gives the entry {@code name} itself to {@code uid:gid} ({@code lchown}: a link is changed, never followed). */
    public void chown(Path name, int uid, int gid) throws IOException {
        Files.setAttribute(resolve(name), "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(resolve(name), "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
    }

    /** A regular file opened for reading, with its attributes as read through the descriptor that opened it. */
    public record OpenedFile(FileChannel channel, PosixFileAttributes attributes) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    /**
     * Opens the entry {@code name} (a name as {@link #entries} lists it) for reading if it is a regular file
     * ({@code O_NOFOLLOW | O_NONBLOCK}: a link is not followed, a FIFO never waited on), checked on the descriptor
     * opened, so a name swapped meanwhile is not read; null when it is gone, a link, or anything but a file. Any
     * other failure (no descriptors left, an I/O error) throws: a file is never left out silently for it.
     */
    public OpenedFile openRegular(Path name) throws IOException {
        int f = openat(fd, bytesOf(name), O_NOFOLLOW | O_NONBLOCK, 0);
        if (f == -ENOENT || f == -ELOOP) {
            return null;
        }
        if (f < 0) {
            throw new IOException("cannot open " + shown.resolve(name) + ": errno " + -f);
        }
        try {
            Path file = Path.of("/proc/self/fd", Integer.toString(f));
            PosixFileAttributes attrs = Files.readAttributes(file, PosixFileAttributes.class);
            if (!attrs.isRegularFile()) {
                return null;
            }
            return new OpenedFile(FileChannel.open(file, StandardOpenOption.READ), attrs); // kept after f closes
        } finally {
            closeFd(f);
        }
    }

    /**
     * Up to {@code max} names of this directory, as its listing gives them: each keeps its bytes, even those that are
     * no valid name in the JVM's encoding (a task may make any), for {@link #resolve(Path)} and the methods that take
     * such a name.
     */
    public List<Path> entries(int max) throws IOException {
        List<Path> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(path())) {
            for (Path entry : entries) {
                if (names.size() == max) {
                    break;
                }
                names.add(entry.getFileName());
            }
        }
        return names;
    }

    /** The names in this directory; more than {@code limit} is refused (a task may fill it to stall the agent). */
    public List<String> list(int limit) throws IOException {
        List<Path> names = entries(limit == Integer.MAX_VALUE ? limit : limit + 1);
        if (names.size() > limit) {
            throw new IOException(shown + " holds more than " + limit + " entries: refused");
        }
        return names.stream().map(Path::toString).toList();
    }

    /** Makes this directory {@code uid:gid} with {@code mode}, through its descriptor. */
    public void own(int uid, int gid, int mode) throws IOException {
        setOwnerAndMode(path(), uid, gid, mode);
    }

    /**
     * Creates the file {@code name} (it must not exist: {@code O_CREAT|O_EXCL} fails on anything there, a link
     * included), writes and syncs {@code content}, then gives it {@code uid:gid} and {@code mode} through its own
     * descriptor. Throws {@link FileAlreadyExistsException} when the name is taken.
     */
    public void createFile(String name, byte[] content, int uid, int gid, int mode) throws IOException {
        int f = openat(fd, PathNames.component(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0600);
        if (f == -EEXIST) {
            throw new FileAlreadyExistsException(shown(name).toString());
        }
        if (f < 0) {
            throw new IOException("cannot create " + shown(name) + ": errno " + -f);
        }
        try {
            Path file = Path.of("/proc/self/fd", Integer.toString(f));
            try (FileChannel out = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ByteBuffer data = ByteBuffer.wrap(content);
                while (data.hasRemaining()) {
                    out.write(data);
                }
                out.force(true);
            }
            setOwnerAndMode(file, uid, gid, mode);
        } finally {
            closeFd(f);
        }
    }

    /**
     * The content of the regular file {@code name} if it is {@code uid}'s, has one link, mode {@code mode} and
     * {@code length} bytes; null otherwise. What fails those checks is never opened for reading (so a hard link to
     * another's file is not read), and a FIFO is never waited on.
     */
    public byte[] readIfOwned(String name, int uid, int mode, int length) throws IOException {
        if (!ownedRegular(resolve(name), uid, mode, length, LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        int f = openat(fd, PathNames.component(name), O_NOFOLLOW | O_NONBLOCK, 0);
        if (f < 0) {
            return null; // replaced or removed since: not what was written
        }
        try {
            Path file = Path.of("/proc/self/fd", Integer.toString(f));
            if (!ownedRegular(file, uid, mode, length)) {
                return null; // the name was swapped between the two looks
            }
            ByteBuffer data = ByteBuffer.allocate(length + 1);
            try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
                while (data.hasRemaining() && in.read(data) >= 0) {
                    // reads at most one byte more than expected: a file a task grows is not read whole
                }
            }
            return data.position() == length ? Arrays.copyOf(data.array(), length) : null;
        } finally {
            closeFd(f);
        }
    }

    @Override
    public void close() {
        closeFd(fd);
    }

    @Override
    public String toString() {
        return "DirectoryHandle[" + shown + "]";
    }

    private static boolean ownedRegular(Path p, int uid, int mode, int length, LinkOption... options)
            throws IOException {
        var a = Files.readAttributes(p, "unix:isRegularFile,uid,mode,nlink,size", options);
        return (Boolean) a.get("isRegularFile")
                && (Integer) a.get("uid") == uid
                && ((Integer) a.get("mode") & 07777) == mode
                && (Integer) a.get("nlink") == 1
                && (Long) a.get("size") == length;
    }

    private static void setOwnerAndMode(Path p, int uid, int gid, int mode) throws IOException {
        Files.setAttribute(p, "unix:uid", uid);
        Files.setAttribute(p, "unix:gid", gid);
        Files.setPosixFilePermissions(p, permissions(mode)); // after chown, which may clear bits
    }

    public static Set<PosixFilePermission> permissions(int mode) {
        if ((mode & ~0777) != 0) {
            throw new IllegalArgumentException("mode " + Integer.toOctalString(mode) + " is not within 0777");
        }
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE, high bit first
        for (int i = 0; i < bits.length; i++) {
            if ((mode & (1 << (bits.length - 1 - i))) != 0) {
                set.add(bits[i]);
            }
        }
        return set;
    }

    private static BasicFileAttributes attributes(Path agentOwned) {
        try {
            return Files.readAttributes(agentOwned, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return null;
        }
    }

    private static IOException notADirectory(Path where, int errno, BasicFileAttributes seen) {
        if (errno == ENOENT) {
            return new NoSuchFileException(where.toString());
        }
        String what = "not a directory (errno " + errno + ")";
        if (seen != null && seen.isSymbolicLink()) {
            what = "a symbolic link";
        } else if (seen != null && seen.isOther()) {
            what = "a FIFO, socket or device";
        } else if (seen != null && seen.isRegularFile()) {
            what = "a file";
        }
        return new IOException(UserText.bare(where.toString()) + " is " + what
                + ", not a directory the agent may write in: refused (a link there would send the agent's writes"
                + " elsewhere)");
    }

    /** Where a name's bytes are read back from: a directory that cannot exist, so making its URI looks up nothing. */
    private static final Path NOWHERE = Path.of("/proc/self/fd/-1");

    private static final String NOWHERE_URI = NOWHERE.toUri().getRawPath() + "/";

    /**
     * The bytes of {@code name}, one component as a directory listing gives it. Java keeps a listed name's bytes in
     * its {@code Path} and decodes them only to make a {@code String}, which loses those that are no valid name in
     * its encoding ({@code \xff}, or any byte past ASCII under the C locale); its {@code file:} URI writes every byte
     * out, escaped, so they are read back from there.
     */
    static byte[] bytesOf(Path name) {
        if (name.isAbsolute() || name.getNameCount() != 1) {
            throw new IllegalArgumentException("not one file name: " + UserText.quote(name.toString()));
        }
        String uri = NOWHERE.resolve(name).toUri().getRawPath();
        if (!uri.startsWith(NOWHERE_URI)) {
            throw new IllegalStateException("unexpected file URI " + uri);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = NOWHERE_URI.length(); i < uri.length(); i++) {
            char c = uri.charAt(i);
            if (c == '%') {
                bytes.write(HexFormat.fromHexDigits(uri, i + 1, i + 3));
                i += 2;
            } else {
                bytes.write(c); // URI characters are ASCII
            }
        }
        byte[] b = bytes.toByteArray();
        if (b.length == 0 || (b.length <= 2 && new String(b, StandardCharsets.US_ASCII).matches("\\.{1,2}"))) {
            throw new IllegalArgumentException("not one file name: " + UserText.quote(name.toString()));
        }
        for (byte x : b) {
            if (x == '/' || x == 0) {
                throw new IllegalArgumentException("not one file name: " + UserText.quote(name.toString()));
            }
        }
        return b;
    }
}
