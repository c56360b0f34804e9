package dev.drover.allocwatcher;

import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Optional;

/**
 * Which successor took a previous allocation's disk: a {@value #FILE} file in the previous allocation's directory,
 * on the node that has the disk, holding {@code NAME/UID} of the successor. The first claimant wins and keeps it for
 * as long as the disk exists (across agent restarts: the same claimant again is granted); any other gets a
 * {@link DiskClaimedException}. The file is written whole (a temporary file, synced, renamed over), mode 0600, and
 * read without following links: a link, a FIFO, a directory, more than {@value #MAX_BYTES} bytes or anything that is
 * not a claim there is refused, never followed or taken for one. Claims are made under one lock, so two successors
 * on this node cannot both win.
 */
public final class DiskClaims {

    static final String FILE = ".disk-claim";
    static final int MAX_BYTES = 512;

    private static final Object LOCK = new Object();

    private DiskClaims() {}

    /**
     * Claims the disk in {@code allocDir} (the previous allocation's directory) for {@code claimant}; returns when
     * the claim is its own, made now or before.
     *
     * @throws DiskClaimedException when another allocation holds it
     * @throws IOException when the claim cannot be read or written (the message says what is there)
     */
    public static void claim(Path allocDir, Claimant claimant) throws IOException {
        Objects.requireNonNull(claimant);
        synchronized (LOCK) {
            Optional<Claimant> holder = holder(allocDir);
            if (holder.isPresent()) {
                if (holder.get().equals(claimant)) {
                    return;
                }
                throw new DiskClaimedException(
                        allocDir.getFileName().toString(), holder.get().name());
            }
            write(allocDir, claimant);
        }
    }

    /** Who holds the disk in {@code allocDir}; empty when no one claimed it. */
    public static Optional<Claimant> holder(Path allocDir) throws IOException {
        Path file = allocDir.resolve(FILE);
        BasicFileAttributes before;
        try {
            before = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        if (!before.isRegularFile()) {
            throw new IOException("the disk claim " + file + " is not a regular file ("
                    + (before.isSymbolicLink() ? "a link" : before.isDirectory() ? "a directory" : "a special file")
                    + "); it is not followed: remove it to let a successor claim the disk");
        }
        if (before.size() > MAX_BYTES) {
            throw new IOException("the disk claim " + file + " holds " + before.size() + " bytes, more than a claim"
                    + " (" + MAX_BYTES + " at most); remove it to let a successor claim the disk");
        }
        byte[] bytes;
        try (SeekableByteChannel in = Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            ByteBuffer buffer = ByteBuffer.allocate(MAX_BYTES + 1);
            while (buffer.hasRemaining() && in.read(buffer) >= 0) {
                // until the end, or one byte past the most a claim holds
            }
            if (buffer.position() > MAX_BYTES) {
                throw new IOException("the disk claim " + file + " grew past " + MAX_BYTES + " bytes while read");
            }
            bytes = new byte[buffer.position()];
            buffer.flip().get(bytes);
        }
        BasicFileAttributes after = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!Objects.equals(before.fileKey(), after.fileKey())) {
            throw new IOException("the disk claim " + file + " was replaced while read");
        }
        String text = new String(bytes, StandardCharsets.UTF_8).strip();
        return Optional.of(Claimant.parse(text)
                .orElseThrow(() -> new IOException("the disk claim " + file + " holds no claim (" + UserText.quote(text)
                        + " is not NAME/UID); remove it to let a successor claim the disk")));
    }

    private static void write(Path allocDir, Claimant claimant) throws IOException {
        if (!Files.isDirectory(allocDir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("the disk of " + allocDir.getFileName() + " is gone: no directory " + allocDir);
        }
        Path tmp = Files.createTempFile(
                allocDir,
                FILE,
                ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                ByteBuffer content = ByteBuffer.wrap((claimant.value() + "\n").getBytes(StandardCharsets.UTF_8));
                while (content.hasRemaining()) {
                    out.write(content);
                }
                out.force(true);
            }
            Files.move(tmp, allocDir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
        try (FileChannel dir = FileChannel.open(allocDir, StandardOpenOption.READ)) {
            dir.force(true); // the rename itself survives a crash
        }
    }
}
