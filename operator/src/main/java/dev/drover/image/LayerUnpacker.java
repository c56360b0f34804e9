package dev.drover.image;

import dev.drover.common.UserText;
import dev.drover.fs.ArchiveException;
import dev.drover.fs.BoundedTarInput;
import dev.drover.fs.DirectoryHandle;
import dev.drover.fs.TreeRemover;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.apache.commons.compress.compressors.zstandard.ZstdCompressorInputStream;

/**
 * Applies an image's layers, bottom first, to one directory, the image's root filesystem, as a container runtime
 * would stack them: later entries replace earlier ones, a {@code .wh.NAME} whiteout deletes {@code NAME} of the layers
 * below, and a {@code .wh..wh..opq} marker hides all its directory held below. Only the agent writes that directory,
 * and nothing a layer holds can reach outside it:
 * <ul>
 * <li>names are relative (a leading {@code /} or {@code ./} is dropped), never {@code ..}, at most 4096 bytes;</li>
 * <li>each directory on an entry's way is looked at without following links and must be a real directory: an entry
 * through a link is refused (the kernel, not the agent, resolves links, inside the container);</li>
 * <li>a symbolic link is made as it is and never followed here; a hard link must name a regular file already in the
 * root, reached the same way;</li>
 * <li>device files, FIFOs and sparse files are refused (the runtime gives a container its {@code /dev});</li>
 * <li>file content counts against the image's size bound, and the stream itself against it too
 * ({@link BoundedTarInput}); at most {@link #MAX_ENTRIES} entries per layer.</li>
 * </ul>
 * Owners and modes (set-user-ID bits included) are kept as the layer gives them when the agent runs as root: the store
 * is the agent's alone ({@code 0700}), and a container runs with {@code no_new_privileges}.
 */
final class LayerUnpacker {

    static final int MAX_ENTRIES = 1_000_000;
    static final int MAX_PATH_BYTES = 4096;
    private static final String WHITEOUT = ".wh.";
    private static final String OPAQUE = ".wh..wh..opq";
    /** How deep a tree removed from an image (or the store) may be. */
    static final int REMOVE_DEPTH = 512;

    private final Path root;
    private final boolean owners;
    private long left;

    /**
     * @param root     the (empty, agent-made) directory the root filesystem is built in
     * @param maxBytes what all layers' files may hold together
     */
    LayerUnpacker(Path root, long maxBytes) {
        this.root = root;
        this.left = maxBytes;
        this.owners = "root".equals(System.getProperty("user.name"));
    }

    /** What file content may still be written. */
    long left() {
        return left;
    }

    /** Trailing bytes after a layer's end-of-archive blocks (record padding) read to check its diff ID. */
    private static final long MAX_TRAILER = 16 * 1024 * 1024;

    /**
     * Decompresses the layer {@code blob} as its media type says and applies it, checking the tar against its diff
     * ID.
     */
    void applyBlob(Path blob, Descriptor layer, Digest diffId, String name) throws IOException {
        MessageDigest sha = Digest.sha256();
        try (InputStream file = new BufferedInputStream(Files.newInputStream(blob), 64 * 1024);
                InputStream raw = decompressed(file, layer.mediaType());
                DigestInputStream tar = new DigestInputStream(raw, sha)) {
            apply(tar, name);
            long trailing = tar.transferTo(OutputStream.nullOutputStream());
            if (trailing > MAX_TRAILER) {
                throw new ArchiveException(name + " has " + trailing + " bytes after its end");
            }
        } catch (ArchiveException refused) {
            throw new ImagePullException(refused.getMessage());
        } catch (IOException broken) {
            throw new ImagePullException(name + " cannot be unpacked: " + UserText.cut(broken.getMessage(), 200));
        }
        if (!diffId.matches(sha)) {
            throw new ImagePullException(
                    name + " does not unpack to the content its image's config names (" + diffId + "): refused");
        }
    }

    private static InputStream decompressed(InputStream in, String mediaType) throws IOException {
        if (mediaType.endsWith("+zstd")) {
            return new ZstdCompressorInputStream(in);
        }
        if (mediaType.endsWith("gzip")) {
            return new GZIPInputStream(in, 64 * 1024);
        }
        return in;
    }

    /** Applies one layer's (uncompressed) tar stream; {@code name} names it in messages. */
    void apply(InputStream tar, String name) throws IOException {
        BoundedTarInput in = new BoundedTarInput(tar, left, name, "the image size bound of " + mb(left));
        Set<String> ours = new HashSet<>();
        List<String> opaque = new ArrayList<>();
        int entries = 0;
        TarArchiveEntry e;
        while ((e = in.next()) != null) {
            if (++entries > MAX_ENTRIES) {
                throw new ArchiveException(name + " has more than " + MAX_ENTRIES + " entries");
            }
            String path = checked(e.getName(), name);
            if (path.isEmpty()) {
                continue; // the root itself: its owner and mode are the agent's
            }
            int slash = path.lastIndexOf('/');
            String parent = slash < 0 ? "" : path.substring(0, slash);
            String base = path.substring(slash + 1);
            if (base.equals(OPAQUE)) {
                directoryOf(parent, path, name);
                opaque.add(parent);
                continue;
            }
            if (base.startsWith(WHITEOUT)) {
                String hidden = (parent.isEmpty() ? "" : parent + "/") + base.substring(WHITEOUT.length());
                checked(hidden, name);
                remove(hidden, path, name);
                continue;
            }
            mark(ours, path);
            write(in, e, path, name);
        }
        for (String dir : opaque) {
            hideBelow(dir, ours);
        }
    }

    private void write(BoundedTarInput in, TarArchiveEntry e, String path, String name) throws IOException {
        if (e.isSparse()) {
            throw refused(name, path, "is a sparse file, which Drover does not unpack");
        }
        byte type = e.getLinkFlag();
        Path at = directoryOf(parentOf(path), path, name).resolve(baseOf(path));
        BasicFileAttributes existing = lstat(at);
        if (type == TarConstants.LF_DIR) {
            if (existing != null && !existing.isDirectory()) {
                remove(path, path, name);
                existing = null;
            }
            if (existing == null) {
                Files.createDirectory(at);
            }
            own(at, e, true);
            return;
        }
        if (existing != null) {
            remove(path, path, name); // replaced: a new inode, so a hard link of the old one keeps its content
        }
        switch (type) {
            case TarConstants.LF_NORMAL, TarConstants.LF_OLDNORM, TarConstants.LF_CONTIG -> {
                long size = e.getSize();
                if (size > left) {
                    throw refused(name, path, "would take the image over its size bound of " + mb(left));
                }
                left -= size;
                try (OutputStream out = Files.newOutputStream(
                        at, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                    long copied;
                    try {
                        copied = in.content().transferTo(out);
                    } catch (IOException truncated) {
                        // the archive ends inside it: a header that claims what the layer does not hold
                        throw refused(name, path, "claims " + size + " bytes the layer does not hold");
                    }
                    if (copied != size) {
                        throw refused(name, path, "ends after " + copied + " of its " + size + " bytes");
                    }
                }
                own(at, e, true);
            }
            case TarConstants.LF_SYMLINK -> {
                String target = e.getLinkName();
                if (target.isEmpty()
                        || target.indexOf('\0') >= 0
                        || target.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
                    throw refused(name, path, "is a link with an unusable target");
                }
                Files.createSymbolicLink(at, Path.of(target));
                own(at, e, false);
            }
            case TarConstants.LF_LINK -> {
                String source = checked(e.getLinkName(), name);
                Path from = directoryOf(parentOf(source), path, name).resolve(baseOf(source));
                BasicFileAttributes a = lstat(from);
                if (a == null || !a.isRegularFile()) {
                    throw refused(
                            name,
                            path,
                            "is a hard link to " + UserText.quote(source)
                                    + ", which is not a regular file the image holds");
                }
                Files.createLink(at, from);
            }
            case TarConstants.LF_CHR, TarConstants.LF_BLK ->
                throw refused(
                        name,
                        path,
                        "is a device file, which Drover does not make (the runtime gives a" + " container its /dev)");
            case TarConstants.LF_FIFO -> throw refused(name, path, "is a FIFO, which Drover does not make");
            default -> throw refused(name, path, "is of tar type '" + (char) type + "', which Drover does not read");
        }
    }

    /** The directory {@code dir} (a checked relative path), made as needed; refused if it goes through a link. */
    private Path directoryOf(String dir, String entry, String name) throws IOException {
        Path at = root;
        if (dir.isEmpty()) {
            return at;
        }
        for (String part : dir.split("/")) {
            at = at.resolve(part);
            BasicFileAttributes a = lstat(at);
            if (a == null) {
                Files.createDirectory(at);
            } else if (a.isSymbolicLink()) {
                throw refused(
                        name,
                        entry,
                        "goes through the link "
                                + UserText.quote(root.relativize(at).toString()));
            } else if (!a.isDirectory()) {
                throw refused(
                        name,
                        entry,
                        "goes through the file "
                                + UserText.quote(root.relativize(at).toString()));
            }
        }
        return at;
    }

    /** Removes {@code path} (a directory with all it holds) if it is there; a link is removed, never followed. */
    private void remove(String path, String entry, String name) throws IOException {
        Path parent = directoryOf(parentOf(path), entry, name);
        try (DirectoryHandle dir = DirectoryHandle.open(parent)) {
            TreeRemover.remove(dir, baseOf(path), MAX_ENTRIES, REMOVE_DEPTH);
        }
    }

    /** What the layers below left in the opaque directory {@code dir}, and this layer did not write, goes. */
    private void hideBelow(String dir, Set<String> ours) throws IOException {
        Path at = dir.isEmpty() ? root : root.resolve(dir);
        List<String> children = new ArrayList<>();
        try (var list = Files.list(at)) {
            list.forEach(p -> children.add(p.getFileName().toString()));
        }
        for (String child : children) {
            String path = dir.isEmpty() ? child : dir + "/" + child;
            if (!ours.contains(path)) {
                try (DirectoryHandle d = DirectoryHandle.open(at)) {
                    TreeRemover.remove(d, child, MAX_ENTRIES, REMOVE_DEPTH);
                }
            } else if (Files.isDirectory(at.resolve(child), LinkOption.NOFOLLOW_LINKS)) {
                hideBelow(path, ours);
            }
        }
    }

    /** Notes {@code path} and the directories above it as written by the layer being applied. */
    private static void mark(Set<String> ours, String path) {
        for (String p = path; !p.isEmpty() && ours.add(p); p = parentOf(p)) {
            // each ancestor once
        }
    }

    private void own(Path at, TarArchiveEntry e, boolean mode) throws IOException {
        if (owners) {
            Files.setAttribute(at, "unix:uid", (int) e.getLongUserId(), LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(at, "unix:gid", (int) e.getLongGroupId(), LinkOption.NOFOLLOW_LINKS);
        }
        if (mode) {
            Files.setAttribute(at, "unix:mode", e.getMode() & 07777, LinkOption.NOFOLLOW_LINKS);
            Files.setLastModifiedTime(at, FileTime.from(e.getLastModifiedDate().toInstant()));
        }
    }

    /** The entry's name made relative ({@code /} and {@code ./} dropped), or refused when it is not a safe path. */
    static String checked(String raw, String name) throws ArchiveException {
        String p = raw;
        while (p.startsWith("/") || p.startsWith("./")) {
            p = p.startsWith("/") ? p.substring(1) : p.substring(2);
        }
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        if (p.equals(".")) {
            return "";
        }
        if (p.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES || p.indexOf('\0') >= 0) {
            throw refused(name, raw, "has an unusable name");
        }
        for (String part : p.isEmpty() ? new String[0] : p.split("/", -1)) {
            if (part.isEmpty()
                    || part.equals(".")
                    || part.equals("..")
                    || part.getBytes(StandardCharsets.UTF_8).length > 255) {
                throw refused(name, raw, "is not a plain relative path (a '..', an empty or overlong component)");
            }
        }
        return p;
    }

    private static BasicFileAttributes lstat(Path p) throws IOException {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (java.nio.file.NoSuchFileException gone) {
            return null;
        }
    }

    private static String parentOf(String path) {
        int slash = path.lastIndexOf('/');
        return slash < 0 ? "" : path.substring(0, slash);
    }

    private static String baseOf(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    private static ArchiveException refused(String layer, String entry, String why) {
        return new ArchiveException(layer + ": entry " + UserText.quote(entry) + " " + why);
    }

    private static String mb(long bytes) {
        return Math.max(0, bytes) / (1024 * 1024) + " MB";
    }
}
