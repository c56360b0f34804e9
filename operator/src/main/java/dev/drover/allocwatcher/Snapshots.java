package dev.drover.allocwatcher;

import dev.drover.api.v1alpha1.Names;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An allocation's ephemeral disk as a tar stream, for migration to another
 * node: {@code alloc/data/...} and each task's {@code TASK/local/...}, in POSIX
 * ustar format (PAX records for long names and large sizes), which {@code tar}
 * reads too.
 *
 * <p>{@link #unpack} treats the stream as hostile (it comes from another node):
 * entries must lie under {@code alloc/data} or a known task's {@code local}; a
 * name that is absolute, holds {@code ..} or goes through a link is refused, as
 * is a link that points out of the directory, a device, fifo or other special
 * file, more bytes than the allocation's disk allows, or more entries than
 * {@link #MAX_ENTRIES}. The first refusal ends the unpacking with a
 * {@link SnapshotException} naming the entry; the caller discards what was
 * unpacked so far.
 */
public final class Snapshots {

    /** Entries one snapshot may hold (files, directories and links): a bound on inodes as sizeMB is on bytes. */
    public static final int MAX_ENTRIES = 100_000;

    private static final int BLOCK = 512;
    private static final String DATA = "alloc/data";

    private Snapshots() {
    }

    /** A snapshot that cannot be unpacked safely, or is not a tar stream. */
    public static final class SnapshotException extends IOException {
        public SnapshotException(String message) {
            super(message);
        }
    }

    /**
     * Writes {@code alloc/data} and each of {@code tasks}' {@code local/} under {@code allocRoot} to {@code out}.
     * Links are written as links, never followed; sockets and fifos are left out. A file that changes while it is
     * read is written with the size it had when its entry began (cut, or padded with zeros).
     */
    public static void pack(Path allocRoot, List<String> tasks, OutputStream out) throws IOException {
        List<String> trees = new ArrayList<>();
        trees.add(DATA);
        for (String t : tasks) {
            trees.add(t + "/local");
        }
        for (String tree : trees) {
            Path dir = allocRoot.resolve(tree);
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                    writeHeader(out, name(allocRoot, d) + "/", mode(d), 0, '5', "");
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                    if (attrs.isSymbolicLink()) {
                        writeHeader(out, name(allocRoot, f), 0777, 0, '2', Files.readSymbolicLink(f).toString());
                    } else if (attrs.isRegularFile()) {
                        long size = attrs.size();
                        writeHeader(out, name(allocRoot, f), mode(f), size, '0', "");
                        try (InputStream in = Files.newInputStream(f, LinkOption.NOFOLLOW_LINKS)) {
                            long copied = copy(in, out, size);
                            out.write(new byte[(int) (size - copied)]); // it shrank meanwhile
                        }
                        pad(out, size);
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        }
        out.write(new byte[2 * BLOCK]);
        out.flush();
    }

    /**
     * Unpacks a snapshot into {@code staging} (an empty directory): entries under {@code alloc/data} and under
     * {@code TASK/local} for each of {@code tasks}; other tasks' entries are skipped. Returns the bytes unpacked.
     *
     * @param maxBytes the allocation's ephemeral disk size: more file content than this is refused
     */
    public static long unpack(InputStream in, Path staging, Set<String> tasks, long maxBytes) throws IOException {
        Path root = staging.toAbsolutePath().normalize();
        Map<String, String> pax = new HashMap<>();
        String longName = null;
        String longLink = null;
        long total = 0;
        int entries = 0;
        byte[] header = new byte[BLOCK];
        while (true) {
            if (!readBlock(in, header)) {
                throw new SnapshotException("the snapshot ends without its end-of-archive blocks (cut short?)");
            }
            if (isZero(header)) {
                return total; // end of archive
            }
            if (!checksumMatches(header)) {
                throw new SnapshotException("the snapshot is not a tar stream, or is corrupt (bad header checksum after "
                        + entries + " entries)");
            }
            char type = (char) header[156];
            long size = octal(header, 124, 12);
            if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
                if (size > 1 << 20) {
                    throw new SnapshotException("an extended header of " + size + " bytes is too large");
                }
                byte[] data = readData(in, size, "an extended header");
                if (type == 'x') {
                    pax.putAll(paxRecords(data));
                } else if (type == 'L') {
                    longName = cString(data, 0, data.length);
                } else if (type == 'K') {
                    longLink = cString(data, 0, data.length);
                }
                continue; // 'g': global records say nothing a snapshot needs
            }
            String name = pax.getOrDefault("path", longName != null ? longName : ustarName(header));
            String link = pax.getOrDefault("linkpath", longLink != null ? longLink : cString(header, 157, 100));
            if (pax.containsKey("size")) {
                size = parseSize(pax.get("size"), name);
            }
            pax.clear();
            longName = null;
            longLink = null;
            if (++entries > MAX_ENTRIES) {
                throw new SnapshotException("the snapshot has more than " + MAX_ENTRIES + " entries");
            }
            String path = checkedName(name);
            boolean wanted = wanted(path, tasks);
            boolean regular = type == '0' || type == '\0' || type == '7';
            if (regular && wanted) {
                if (total + size > maxBytes) {
                    throw new SnapshotException("entry \"" + path + "\" would take the snapshot over the ephemeral disk's "
                            + maxBytes / (1024 * 1024) + " MB");
                }
                total += size;
            }
            if (!wanted) {
                skip(in, regular ? size : 0, path);
                continue;
            }
            Path target = root.resolve(path).normalize();
            if (!target.startsWith(root) || target.equals(root)) {
                throw new SnapshotException("entry \"" + path + "\" points out of the directory");
            }
            parents(root, target, path);
            int mode = (int) octal(header, 100, 8) & 0777;
            switch (type) {
                case '5' -> {
                    if (Files.isSymbolicLink(target)
                            || (Files.exists(target, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS))) {
                        throw new SnapshotException("directory entry \"" + path + "\" collides with an earlier entry");
                    }
                    Files.createDirectories(target);
                    Files.setPosixFilePermissions(target, permissions(mode | 0700));
                }
                case '0', '\0', '7' -> {
                    try (OutputStream out = Files.newOutputStream(target, StandardOpenOption.CREATE_NEW,
                            StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                        if (copy(in, out, size) < size) {
                            throw new SnapshotException("the snapshot ends in the middle of \"" + path + "\"");
                        }
                    } catch (java.nio.file.FileAlreadyExistsException e) {
                        throw new SnapshotException("entry \"" + path + "\" appears twice");
                    }
                    skipPadding(in, size, path);
                    Files.setPosixFilePermissions(target, permissions(mode | 0600));
                }
                case '2' -> {
                    Path to = Path.of(link);
                    if (link.isEmpty() || link.indexOf('\0') >= 0 || to.isAbsolute()
                            || !target.getParent().resolve(to).normalize().startsWith(root)) {
                        throw new SnapshotException("link \"" + path + "\" -> \"" + link + "\" points out of the directory");
                    }
                    Files.createSymbolicLink(target, to);
                }
                case '1' -> {
                    Path source = root.resolve(checkedName(link)).normalize();
                    if (!source.startsWith(root) || !wanted(checkedName(link), tasks)
                            || !Files.isRegularFile(source, LinkOption.NOFOLLOW_LINKS)) {
                        throw new SnapshotException("hard link \"" + path + "\" -> \"" + link
                                + "\" does not name a file unpacked before it");
                    }
                    Files.createLink(target, source);
                }
                default -> throw new SnapshotException("entry \"" + path + "\" is a " + describe(type)
                        + ", which a snapshot never holds");
            }
        }
    }

    /** Whether an entry belongs to what is migrated: {@code alloc/data} or a known task's {@code local}. */
    private static boolean wanted(String path, Set<String> tasks) throws SnapshotException {
        String[] parts = path.split("/");
        if (parts[0].equals("alloc")) {
            if (parts.length == 1 || parts[1].equals("data")) {
                return true;
            }
            throw new SnapshotException("entry \"" + path + "\" is outside alloc/data and the tasks' local directories");
        }
        if (!Names.isLabel(parts[0]) || (parts.length > 1 && !parts[1].equals("local"))) {
            throw new SnapshotException("entry \"" + path + "\" is outside alloc/data and the tasks' local directories");
        }
        return tasks.contains(parts[0]);
    }

    /** The entry's name as a relative path: no leading slash, no {@code ..}, no NUL. */
    private static String checkedName(String raw) throws SnapshotException {
        String name = raw;
        while (name.startsWith("./")) {
            name = name.substring(2);
        }
        while (name.endsWith("/")) {
            name = name.substring(0, name.length() - 1);
        }
        if (name.isEmpty() || raw.startsWith("/") || name.indexOf('\0') >= 0
                || Arrays.asList(name.split("/")).contains("..")) {
            throw new SnapshotException("entry \"" + raw + "\" is absolute, empty or climbs out with ..");
        }
        return name;
    }

    /** Creates the parents of {@code target}; an existing one must be a real directory, never a link. */
    private static void parents(Path root, Path target, String path) throws IOException {
        Path dir = root;
        for (Path part : root.relativize(target.getParent() == null ? root : target.getParent())) {
            if (part.toString().isEmpty()) {
                continue;
            }
            dir = dir.resolve(part);
            if (Files.isSymbolicLink(dir)) {
                throw new SnapshotException("entry \"" + path + "\" goes through the link " + root.relativize(dir));
            }
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(dir);
            } else if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new SnapshotException("entry \"" + path + "\" goes through the file " + root.relativize(dir));
            }
        }
    }

    private static String describe(char type) {
        return switch (type) {
            case '3' -> "character device";
            case '4' -> "block device";
            case '6' -> "fifo";
            default -> "entry of type '" + type + "'";
        };
    }

    private static void writeHeader(OutputStream out, String name, int mode, long size, char type, String link)
            throws IOException {
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        byte[] linkBytes = link.getBytes(StandardCharsets.UTF_8);
        boolean bigSize = size > 077777777777L;
        if (nameBytes.length > 100 || linkBytes.length > 100 || bigSize) {
            StringBuilder records = new StringBuilder();
            if (nameBytes.length > 100) {
                records.append(paxRecord("path", name));
            }
            if (linkBytes.length > 100) {
                records.append(paxRecord("linkpath", link));
            }
            if (bigSize) {
                records.append(paxRecord("size", Long.toString(size)));
            }
            byte[] data = records.toString().getBytes(StandardCharsets.UTF_8);
            out.write(header("PaxHeaders/entry", 0644, data.length, 'x', ""));
            out.write(data);
            pad(out, data.length);
        }
        out.write(header(name, mode, bigSize ? 0 : size, type, link));
    }

    private static byte[] header(String name, int mode, long size, char type, String link) {
        byte[] h = new byte[BLOCK];
        put(h, 0, 100, name);
        put(h, 100, 8, String.format("%07o", mode & 07777));
        put(h, 108, 8, "0000000");
        put(h, 116, 8, "0000000");
        put(h, 124, 12, String.format("%011o", size));
        put(h, 136, 12, String.format("%011o", System.currentTimeMillis() / 1000));
        Arrays.fill(h, 148, 156, (byte) ' ');
        h[156] = (byte) type;
        put(h, 157, 100, link);
        put(h, 257, 6, "ustar");
        put(h, 263, 2, "00");
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        put(h, 148, 8, String.format("%06o", sum));
        h[155] = ' ';
        return h;
    }

    /** Writes {@code s} into the field, cut to its width (names that do not fit go in a PAX record first). */
    private static void put(byte[] h, int at, int width, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(b, 0, h, at, Math.min(b.length, width));
    }

    private static String paxRecord(String key, String value) {
        String body = " " + key + "=" + value + "\n";
        int length = body.getBytes(StandardCharsets.UTF_8).length;
        int total = length + Integer.toString(length).length();
        if (Integer.toString(total).length() > Integer.toString(length).length()) {
            total++;
        }
        return total + body;
    }

    private static Map<String, String> paxRecords(byte[] data) throws SnapshotException {
        Map<String, String> out = new HashMap<>();
        int i = 0;
        while (i < data.length) {
            int space = i;
            while (space < data.length && data[space] != ' ') {
                space++;
            }
            int length;
            try {
                length = Integer.parseInt(new String(data, i, space - i, StandardCharsets.US_ASCII));
            } catch (NumberFormatException e) {
                throw new SnapshotException("a PAX extended header is malformed");
            }
            if (length <= space - i || i + length > data.length) {
                throw new SnapshotException("a PAX extended header is malformed");
            }
            String record = new String(data, space + 1, i + length - space - 2, StandardCharsets.UTF_8);
            int eq = record.indexOf('=');
            if (eq > 0) {
                out.put(record.substring(0, eq), record.substring(eq + 1));
            }
            i += length;
        }
        return out;
    }

    private static long parseSize(String s, String name) throws SnapshotException {
        try {
            long v = Long.parseLong(s);
            if (v < 0) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new SnapshotException("entry \"" + name + "\" has a bad size \"" + s + "\"");
        }
    }

    private static String ustarName(byte[] h) {
        String name = cString(h, 0, 100);
        String magic = cString(h, 257, 6);
        String prefix = magic.startsWith("ustar") ? cString(h, 345, 155) : "";
        return prefix.isEmpty() ? name : prefix + "/" + name;
    }

    private static String cString(byte[] b, int at, int width) {
        int end = at;
        while (end < at + width && b[end] != 0) {
            end++;
        }
        return new String(b, at, end - at, StandardCharsets.UTF_8);
    }

    private static long octal(byte[] h, int at, int width) throws SnapshotException {
        if ((h[at] & 0x80) != 0) {
            throw new SnapshotException("a header uses a base-256 number, which snapshots never need");
        }
        String s = cString(h, at, width).trim();
        try {
            return s.isEmpty() ? 0 : Long.parseLong(s, 8);
        } catch (NumberFormatException e) {
            throw new SnapshotException("a header holds \"" + s + "\" where a number belongs");
        }
    }

    private static boolean checksumMatches(byte[] h) {
        long sum = 0;
        for (int i = 0; i < BLOCK; i++) {
            sum += (i >= 148 && i < 156) ? ' ' : h[i] & 0xff;
        }
        try {
            return sum == octal(h, 148, 8);
        } catch (SnapshotException notANumber) {
            return false;
        }
    }

    private static boolean isZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean readBlock(InputStream in, byte[] block) throws IOException {
        int n = in.readNBytes(block, 0, BLOCK);
        if (n == 0) {
            return false;
        }
        if (n < BLOCK) {
            throw new SnapshotException("the snapshot ends in the middle of a header");
        }
        return true;
    }

    private static byte[] readData(InputStream in, long size, String what) throws IOException {
        byte[] data = in.readNBytes((int) size);
        if (data.length < size) {
            throw new SnapshotException("the snapshot ends in the middle of " + what);
        }
        skipPadding(in, size, what);
        return data;
    }

    private static void skip(InputStream in, long size, String path) throws IOException {
        long padded = (size + BLOCK - 1) / BLOCK * BLOCK;
        try {
            in.skipNBytes(padded);
        } catch (EOFException e) {
            throw new SnapshotException("the snapshot ends in the middle of \"" + path + "\"");
        }
    }

    private static void skipPadding(InputStream in, long size, String path) throws IOException {
        long rest = (BLOCK - size % BLOCK) % BLOCK;
        try {
            in.skipNBytes(rest);
        } catch (EOFException e) {
            throw new SnapshotException("the snapshot ends in the middle of \"" + path + "\"");
        }
    }

    private static void pad(OutputStream out, long size) throws IOException {
        out.write(new byte[(int) ((BLOCK - size % BLOCK) % BLOCK)]);
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

    private static String name(Path root, Path p) {
        return root.relativize(p).toString();
    }

    private static int mode(Path p) throws IOException {
        int mode = 0;
        for (PosixFilePermission perm : Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS)) {
            mode |= 1 << (8 - perm.ordinal());
        }
        return mode;
    }

    private static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> out = EnumSet.noneOf(PosixFilePermission.class);
        for (PosixFilePermission perm : PosixFilePermission.values()) {
            if ((mode & (1 << (8 - perm.ordinal()))) != 0) {
                out.add(perm);
            }
        }
        return out;
    }
}
