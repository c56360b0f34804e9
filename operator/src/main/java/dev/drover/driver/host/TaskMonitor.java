package dev.drover.driver.host;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * drover-monitor, the small C program ({@code operator/src/main/c}) that is each process task's parent: it waits for
 * the task and writes exactly how it ended ({@code exit 130} is not {@code signal 2}), which a shell cannot. It ships
 * in the agent's jar, built for the build machine's architecture; {@link #install} puts it in the agent's data dir.
 */
public final class TaskMonitor {

    /** Where the binary for this JVM's architecture is on the classpath. */
    static final String RESOURCE = "/META-INF/drover/native/linux-"
            + System.getProperty("os.arch").toLowerCase(Locale.ROOT) + "/drover-monitor";

    private static final int MAX_BYTES = 16 << 20;

    private TaskMonitor() {}

    /**
     * Writes the monitor to {@code dataDir/bin/drover-monitor} (dir 0700, file 0500), unless a file with the very
     * same bytes is there, and checks what lies there afterwards against the jar's copy.
     *
     * @return its path, or empty when this agent was built without it (no C compiler at build time)
     * @throws IOException when it cannot be written, or what is there is a link or not what was written
     */
    public static Optional<Path> install(Path dataDir) throws IOException {
        byte[] binary;
        try (InputStream in = TaskMonitor.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                return Optional.empty();
            }
            binary = in.readNBytes(MAX_BYTES + 1);
        }
        if (binary.length > MAX_BYTES) {
            throw new IOException("the monitor in the agent's jar is over " + MAX_BYTES + " bytes");
        }
        Path dir = dataDir.toAbsolutePath().normalize().resolve("bin");
        if (Files.isSymbolicLink(dir)) {
            throw new IOException(dir + " is a link; remove it");
        }
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            Files.createDirectories(
                    dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        Path target = dir.resolve("drover-monitor");
        if (!sameBytes(target, binary)) {
            Path tmp = dir.resolve("drover-monitor.tmp");
            Files.deleteIfExists(tmp); // a link there goes, unfollowed
            try (FileChannel out = FileChannel.open(
                    tmp,
                    java.util.Set.of(
                            StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")))) {
                ByteBuffer bytes = ByteBuffer.wrap(binary);
                while (bytes.hasRemaining()) {
                    out.write(bytes);
                }
                out.force(true);
            }
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("r-x------"));
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            if (!sameBytes(target, binary)) {
                throw new IOException(target + " does not hold the monitor just written to it");
            }
        }
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("r-x------"));
        return Optional.of(target);
    }

    /** Whether {@code file} is a regular file, not a link, whose SHA-256 is that of {@code expected}. */
    private static boolean sameBytes(Path file, byte[] expected) throws IOException {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            if (Files.exists(file, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(file)) {
                throw new IOException(file + " is not a regular file; remove it");
            }
            return false;
        }
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            if (in.size() != expected.length) {
                return false;
            }
            ByteBuffer bytes = ByteBuffer.allocate(expected.length);
            while (bytes.hasRemaining() && in.read(bytes) >= 0) {}
            return Arrays.equals(sha256(bytes.array()), sha256(expected));
        }
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
