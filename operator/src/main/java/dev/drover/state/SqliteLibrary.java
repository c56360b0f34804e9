package dev.drover.state;

import dev.drover.common.UserText;
import dev.drover.fs.TreeRemover;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.jar.JarEntry;
import java.util.zip.CRC32;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.util.LibraryLoaderUtil;

/**
 * SQLite's native library, kept in the data dir. Left to itself the sqlite-jdbc driver copies the library out of its
 * jar into the temp dir at every start, under a new name, and reads the copy back a byte at a time to check it: a
 * tenth of a second of each start on the path to a restore, and an executable written to a shared directory each time.
 * Here the copy is made once per build of the driver, as {@code DATA_DIR/lib/sqlite-CRC-SIZE/libsqlitejdbc.so} (0500
 * in 0700 directories, the agent's own as the store is), checked against the jar entry's CRC-32 and size at each start
 * (a millisecond), and written anew when it does not match; copies of other builds are removed. Links are not
 * followed. Where any of this fails, the driver finds its library as it did before.
 */
final class SqliteLibrary {

    private static final Logger LOG = LoggerFactory.getLogger(SqliteLibrary.class);

    /** The driver's setting for the directory it loads its library from, before it tries its own copy. */
    static final String PATH_PROPERTY = "org.sqlite.lib.path";

    static final String DIRECTORY = "lib";

    private static final String PREFIX = "sqlite-";
    private static final Set<PosixFilePermission> PRIVATE_DIRECTORY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> WRITING = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> LIBRARY = PosixFilePermissions.fromString("r-x------");
    private static final Set<PosixFilePermission> WRITABLE_BY_OTHERS =
            Set.of(PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE);
    private static final AtomicBoolean CHOSEN = new AtomicBoolean();

    private SqliteLibrary() {}

    /**
     * Points the driver at its library's copy under {@code dataDir}, made or remade as needed. Only the first call in
     * a JVM acts (the driver loads its library once), and none where {@value #PATH_PROPERTY} is set already.
     */
    static void keepIn(Path dataDir) {
        if (System.getProperty(PATH_PROPERTY) != null || !CHOSEN.compareAndSet(false, true)) {
            return;
        }
        try {
            Optional<Path> dir = keep(dataDir, LibraryLoaderUtil.getNativeLibName());
            dir.ifPresent(d -> System.setProperty(PATH_PROPERTY, d.toString()));
        } catch (IOException | RuntimeException e) {
            LOG.info(
                    "SQLite's library is copied to the temp dir by its driver, not kept in {}: {}",
                    dataDir,
                    UserText.cut(String.valueOf(e.getMessage()), 300));
        }
    }

    /** The directory holding a checked copy of the library {@code name}; empty where the driver has none in a jar. */
    static Optional<Path> keep(Path dataDir, String name) throws IOException {
        URL resource = SqliteLibrary.class.getResource(resourcePath(name));
        if (resource == null) {
            return Optional.empty();
        }
        URLConnection connection = resource.openConnection();
        if (!(connection instanceof JarURLConnection jar)) {
            return Optional.empty();
        }
        JarEntry entry = jar.getJarEntry();
        if (entry.getCrc() < 0 || entry.getSize() < 0) {
            return Optional.empty();
        }
        Path lib = privateDirectory(dataDir.resolve(DIRECTORY));
        String current = PREFIX + Long.toHexString(entry.getCrc()) + "-" + entry.getSize();
        removeOthers(lib, current);
        Path dir = privateDirectory(lib.resolve(current));
        Path file = dir.resolve(name);
        if (!isCopy(file, entry)) {
            copy(connection, entry, file);
        }
        return Optional.of(dir);
    }

    /** Where the driver keeps the library {@code name} for this platform among its resources. */
    static String resourcePath(String name) {
        String dir = LibraryLoaderUtil.getNativeLibResourcePath(); // "/org/sqlite/native/OS/ARCH"
        return (dir.startsWith("/") ? dir : "/" + dir) + "/" + name;
    }

    /** Whether {@code file} is a regular file of the agent's, no one else can write, with the entry's size and CRC. */
    static boolean isCopy(Path file, JarEntry entry) throws IOException {
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (java.nio.file.NoSuchFileException absent) {
            return false;
        }
        if (!a.isRegularFile()
                || a.size() != entry.getSize()
                || a.permissions().stream().anyMatch(WRITABLE_BY_OTHERS::contains)) {
            return false;
        }
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            return crcOf(in, OutputStream.nullOutputStream()) == entry.getCrc();
        }
    }

    /** Writes the entry to a new file beside {@code file}, checks it, and moves it into place. */
    private static void copy(URLConnection connection, JarEntry entry, Path file) throws IOException {
        Path partial =
                Files.createTempFile(file.getParent(), ".copy-", ".tmp", PosixFilePermissions.asFileAttribute(WRITING));
        try {
            long crc;
            try (InputStream in = connection.getInputStream();
                    OutputStream out = Files.newOutputStream(partial, LinkOption.NOFOLLOW_LINKS)) {
                crc = crcOf(in, out);
            }
            if (Files.size(partial) != entry.getSize() || crc != entry.getCrc()) {
                throw new IOException("the copy of " + entry.getName() + " does not match its jar entry");
            }
            Files.setPosixFilePermissions(partial, LIBRARY);
            Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    /** The CRC-32 of what {@code in} holds, which is written to {@code out} on the way. */
    private static long crcOf(InputStream in, OutputStream out) throws IOException {
        CRC32 crc = new CRC32();
        byte[] buf = new byte[64 * 1024];
        for (int n; (n = in.read(buf)) > 0; ) {
            crc.update(buf, 0, n);
            out.write(buf, 0, n);
        }
        return crc.getValue();
    }

    /** {@code dir}, made 0700 if absent; an existing one must be a directory, not a link to one, and is made 0700. */
    private static Path privateDirectory(Path dir) throws IOException {
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException(dir + " is not a directory");
            }
            Files.setPosixFilePermissions(dir, PRIVATE_DIRECTORY);
        } else {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PRIVATE_DIRECTORY));
        }
        return dir;
    }

    /** Removes the copies of other builds of the driver from {@code lib}. */
    private static void removeOthers(Path lib, String current) throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(lib, PREFIX + "*")) {
            for (Path p : entries) {
                if (!p.getFileName().toString().equals(current)) {
                    TreeRemover.remove(p, 16, 2);
                }
            }
        }
    }
}
