package dev.drover.allocwatcher;

import dev.drover.api.v1alpha1.Names;
import dev.drover.common.UserText;
import dev.drover.fs.ArchiveException;
import dev.drover.fs.BoundedTarInput;
import dev.drover.fs.DirectoryHandle;
import dev.drover.fs.TreeWalk;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * An allocation's ephemeral disk as a tar stream, for migration to another
 * node: {@code alloc/data/...} and each task's {@code TASK/local/...}, in POSIX
 * tar (PAX records for long names and large sizes), which {@code tar} reads
 * too. Apache Commons Compress is the codec; what may be unpacked is decided
 * here and in {@link StagingTree}.
 *
 * <p>{@link #unpack} treats the stream as hostile (it comes from another node):
 * entries must lie under {@code alloc/data} or a known task's {@code local}; a
 * name that is absolute, holds {@code ..}, is longer than {@link #MAX_NAME_BYTES}
 * or goes through a link is refused, as is a link whose target resolves out of
 * the directory, a hard link to anything but a file unpacked before it, a
 * device, fifo, sparse or other special file, more bytes than the allocation's
 * disk allows (every byte of the stream counts, {@link BoundedTarInput}), or more
 * entries than {@link #MAX_ENTRIES}. The first refusal ends the unpacking with
 * a {@link SnapshotException} naming the entry; the caller discards what was
 * unpacked so far.
 */
public final class Snapshots {

    /** Entries one snapshot may hold (files, directories and links): a bound on inodes as sizeMB is on bytes. */
    public static final int MAX_ENTRIES = 100_000;
    /** The longest entry name (Linux's PATH_MAX); each component is at most {@link #MAX_COMPONENT_BYTES}. */
    public static final int MAX_NAME_BYTES = 4096;

    static final int MAX_COMPONENT_BYTES = 255;

    private static final int BLOCK = 512;
    private static final String DATA = "alloc/data";
    /** How much of a name a message shows. */
    private Snapshots() {}

    /**
     * Writes {@code alloc/data} and each of {@code tasks}' {@code local/} under {@code allocRoot} to {@code out}.
     * Links are written as links, never followed; sockets and fifos are left out. A file that changes while it is
     * read is written with the size it had when its entry began (cut, or padded with zeros). {@code out} is
     * flushed, not closed.
     */
    public static void pack(Path allocRoot, List<String> tasks, OutputStream out) throws IOException {
        List<String> trees = new ArrayList<>();
        trees.add(DATA);
        for (String t : tasks) {
            trees.add(t + "/local");
        }
        TarArchiveOutputStream tar = new TarArchiveOutputStream(out, BLOCK, StandardCharsets.UTF_8.name());
        tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
        tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
        tar.setAddPaxHeadersForNonAsciiNames(true);
        for (String tree : trees) {
            Path dir = allocRoot.resolve(tree);
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            DirectoryHandle root;
            try {
                root = DirectoryHandle.open(dir);
            } catch (NoSuchFileException gone) {
                continue;
            }
            try (root) {
                putDirectory(tar, tree, Files.readAttributes(root.path(), PosixFileAttributes.class));
                TreeWalk.walk(root, TreeWalk.PATH_DEPTH, (in, name, path, attrs) -> {
                    String entry = tree + "/" + path;
                    if (attrs.isDirectory()) {
                        putDirectory(tar, entry, attrs);
                    } else if (attrs.isSymbolicLink()) {
                        putLink(tar, entry, in, name, attrs);
                    } else if (attrs.isRegularFile()) {
                        putFile(tar, entry, in, name);
                    }
                    return true;
                });
            }
        }
        tar.finish(); // not close: out is the caller's
        out.flush();
    }

    /**
     * Unpacks a snapshot into {@code staging} (an empty directory): entries under {@code alloc/data} and under
     * {@code TASK/local} for each of {@code tasks}; other tasks' entries are skipped. Returns the bytes unpacked.
     *
     * @param maxBytes the allocation's ephemeral disk size: more file content than this is refused, and the whole
     *                 stream may be only this and tar's framing
     */
    public static long unpack(InputStream in, Path staging, Set<String> tasks, long maxBytes) throws IOException {
        try {
            return unpackChecked(in, staging, tasks, maxBytes);
        } catch (SnapshotException refused) {
            throw refused;
        } catch (ArchiveException refused) {
            throw new SnapshotException(refused.getMessage()); // the bounded reader's refusal, as a snapshot's
        }
    }

    private static long unpackChecked(InputStream in, Path staging, Set<String> tasks, long maxBytes)
            throws IOException {
        StagingTree tree = new StagingTree(staging);
        long total = 0;
        int entries = 0;
        BoundedTarInput tar = new BoundedTarInput(
                in, maxBytes, "the snapshot", "the ephemeral disk's " + maxBytes / (1024 * 1024) + " MB");
        TarArchiveEntry e;
        while ((e = tar.next()) != null) {
            if (++entries > MAX_ENTRIES) {
                throw new SnapshotException("the snapshot has more than " + MAX_ENTRIES + " entries");
            }
            String path = checkedName(e.getName());
            byte type = e.getLinkFlag();
            boolean regular =
                    type == TarConstants.LF_NORMAL || type == TarConstants.LF_OLDNORM || type == TarConstants.LF_CONTIG;
            if (!wanted(path, tasks)) {
                continue; // its content is read and counted by the next call
            }
            if (e.isSparse()) {
                throw new SnapshotException(
                        "entry " + UserText.quote(path) + " is a sparse file, which a snapshot" + " never holds");
            }
            long size = regular ? e.getSize() : 0;
            if (total + size > maxBytes) {
                throw new SnapshotException("entry " + UserText.quote(path) + " would take the snapshot over the"
                        + " ephemeral disk's " + maxBytes / (1024 * 1024) + " MB");
            }
            total += size;
            int mode = e.getMode() & 0777;
            switch (type) {
                case TarConstants.LF_DIR -> tree.directory(path, mode);
                case TarConstants.LF_NORMAL, TarConstants.LF_OLDNORM, TarConstants.LF_CONTIG ->
                    tree.file(path, mode, content(tar, path), size);
                case TarConstants.LF_SYMLINK -> tree.symlink(path, e.getLinkName());
                case TarConstants.LF_LINK -> {
                    String source = checkedName(e.getLinkName());
                    wanted(source, tasks);
                    tree.hardLink(path, source);
                }
                default ->
                    throw new SnapshotException("entry " + UserText.quote(path) + " is a " + describe(type)
                            + ", which a snapshot never holds");
            }
        }
        tree.checkLinks();
        return total;
    }

    /** An entry's content; a stream that ends inside it is a cut snapshot, said so with the entry's name. */
    private static InputStream content(BoundedTarInput tar, String path) {
        return new FilterInputStream(tar.content()) {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                try {
                    return super.read(b, off, len);
                } catch (ArchiveException refused) {
                    throw refused;
                } catch (IOException cut) {
                    throw new SnapshotException("the snapshot ends in the middle of " + UserText.quote(path));
                }
            }

            @Override
            public void close() {
                // the entry's end is the archive's business
            }
        };
    }

    private static boolean wanted(String path, Set<String> tasks) throws SnapshotException {
        String[] parts = path.split("/");
        if (parts[0].equals("alloc")) {
            if (parts.length == 1 || parts[1].equals("data")) {
                return true;
            }
            throw new SnapshotException(
                    "entry " + UserText.quote(path) + " is outside alloc/data and the tasks' local directories");
        }
        if (!Names.isLabel(parts[0]) || (parts.length > 1 && !parts[1].equals("local"))) {
            throw new SnapshotException(
                    "entry " + UserText.quote(path) + " is outside alloc/data and the tasks' local directories");
        }
        return tasks.contains(parts[0]);
    }

    /**
     * The entry's name as a clean relative path ({@code ./} and empty parts dropped): refused when absolute, empty,
     * holding {@code ..} or NUL, or longer than the kernel takes.
     */
    private static String checkedName(String raw) throws SnapshotException {
        if (raw.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            throw new SnapshotException(
                    "entry " + UserText.quote(raw) + " has a name longer than " + MAX_NAME_BYTES + " bytes");
        }
        List<String> parts = new ArrayList<>();
        for (String part : raw.split("/")) {
            if (part.equals("..") || part.indexOf('\0') >= 0) {
                throw new SnapshotException(
                        "entry " + UserText.quote(raw) + " is absolute, empty or climbs out with ..");
            }
            if (part.getBytes(StandardCharsets.UTF_8).length > MAX_COMPONENT_BYTES) {
                throw new SnapshotException("entry " + UserText.quote(raw) + " has a name part longer than "
                        + MAX_COMPONENT_BYTES + " bytes");
            }
            if (!part.isEmpty() && !part.equals(".")) {
                parts.add(part);
            }
        }
        if (parts.isEmpty() || raw.startsWith("/")) {
            throw new SnapshotException("entry " + UserText.quote(raw) + " is absolute, empty or climbs out with ..");
        }
        return String.join("/", parts);
    }

    private static String describe(byte type) {
        return switch (type) {
            case TarConstants.LF_CHR -> "character device";
            case TarConstants.LF_BLK -> "block device";
            case TarConstants.LF_FIFO -> "fifo";
            default ->
                type >= 0x20 && type < 0x7f ? "entry of type '" + (char) type + "'" : "entry of type " + (type & 0xff);
        };
    }

    /** Copies up to {@code size} bytes; returns how many there were. */
    private static long copy(InputStream in, OutputStream out, long size) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        long left = size;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) {
                break;
            }
            out.write(buffer, 0, n);
            left -= n;
        }
        return size - left;
    }

    private static void putDirectory(TarArchiveOutputStream tar, String name, PosixFileAttributes attrs)
            throws IOException {
        TarArchiveEntry e = new TarArchiveEntry(name + "/", TarConstants.LF_DIR);
        e.setMode(mode(attrs));
        e.setModTime(seconds(attrs));
        tar.putArchiveEntry(e);
        tar.closeArchiveEntry();
    }

    /** The link {@code name} of {@code dir}, as a link; left out when it is no longer one. */
    private static void putLink(
            TarArchiveOutputStream tar, String entry, DirectoryHandle dir, Path name, PosixFileAttributes attrs)
            throws IOException {
        Path target;
        try {
            target = Files.readSymbolicLink(dir.resolve(name));
        } catch (NotLinkException replaced) {
            return; // what replaced it is not looked into
        }
        TarArchiveEntry e = new TarArchiveEntry(entry, TarConstants.LF_SYMLINK);
        e.setLinkName(target.toString());
        e.setMode(0777);
        e.setModTime(seconds(attrs));
        tar.putArchiveEntry(e);
        tar.closeArchiveEntry();
    }

    /**
     * The regular file {@code name} of {@code dir}, read through the descriptor opened for it (never by its path
     * again, so a name a task swaps for a link or a FIFO meanwhile is not read); left out when it is no longer a
     * file. Its size and mode are the opened file's.
     */
    private static void putFile(TarArchiveOutputStream tar, String entry, DirectoryHandle dir, Path name)
            throws IOException {
        DirectoryHandle.OpenedFile file = dir.openRegular(name);
        if (file == null) {
            return;
        }
        try (file) {
            long size = file.attributes().size();
            TarArchiveEntry e = new TarArchiveEntry(entry, TarConstants.LF_NORMAL);
            e.setSize(size);
            e.setMode(mode(file.attributes()));
            e.setModTime(seconds(file.attributes()));
            tar.putArchiveEntry(e);
            byte[] zeros = new byte[BLOCK];
            for (long left = size - copy(Channels.newInputStream(file.channel()), tar, size);
                    left > 0;
                    left -= zeros.length) {
                tar.write(zeros, 0, (int) Math.min(left, zeros.length)); // it shrank meanwhile
            }
            tar.closeArchiveEntry();
        }
    }

    /**
     * The modification time to whole seconds, which the ustar header holds: with the sub-second part Commons
     * Compress adds a PAX header (1 KiB) to every entry, which a snapshot does not need.
     */
    private static FileTime seconds(BasicFileAttributes attrs) {
        return FileTime.from(attrs.lastModifiedTime().to(TimeUnit.SECONDS), TimeUnit.SECONDS);
    }

    private static int mode(PosixFileAttributes attrs) {
        int mode = 0;
        for (PosixFilePermission perm : attrs.permissions()) {
            mode |= 1 << (8 - perm.ordinal());
        }
        return mode;
    }
}
