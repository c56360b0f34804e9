package dev.drover.state;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The data dir and the store are the agent user's alone: the store holds every allocation's environment values,
 * secrets included, and the data dir every task's files. Modes are set explicitly, at creation and again on an
 * existing path (which an older agent made with the process umask), never left to the umask.
 */
public final class PrivateFiles {

    private static final Set<PosixFilePermission> DIRECTORY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");

    private PrivateFiles() {}

    /** Creates {@code dir} (and missing parents) if needed, and makes it 0700. */
    public static void directory(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, DIRECTORY);
    }

    /** Creates {@code file} empty if it does not exist, and makes it 0600. */
    static void file(Path file) throws IOException {
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(FILE));
        }
        Files.setPosixFilePermissions(file, FILE);
    }
}
