package dev.drover.cgroups;

import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads and writes of cgroup files, each bounded and strict. What a cgroup file says is treated as hostile: a task
 * running as root may have mounted anything there, so a read takes at most a few KiB, a value that is not what the
 * kernel writes is an error naming the file, and no link is ever followed.
 */
final class CgroupFiles {

    /** Most bytes of a file holding one value (memory.max, freezer.state). */
    static final int VALUE_LIMIT = 256;
    /** Most bytes of a table of {@code key value} lines (memory.stat, cpu.stat). */
    static final int TABLE_LIMIT = 16 * 1024;
    /** Most bytes of cgroup.procs read at once; a longer list is taken a prefix at a time. */
    static final int PIDS_LIMIT = 64 * 1024;
    /** Most lines of a table. */
    private static final int TABLE_LINES = 256;

    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9_]{1,64}");
    private static final Pattern NUMBER = Pattern.compile("[0-9]{1,19}");
    private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};

    private CgroupFiles() {}

    /** Whether {@code file} is a regular file (a link to one is not). */
    static boolean exists(Path file) {
        return Files.isRegularFile(file, NOFOLLOW);
    }

    /** The whole text of {@code file}, which must be at most {@code limit} bytes. */
    static String read(Path file, int limit) throws IOException {
        Chunk chunk = readChunk(file, limit);
        if (chunk.truncated) {
            throw new IOException(
                    file + " holds more than " + limit + " bytes; a cgroup file this long is not the" + " kernel's");
        }
        return chunk.text;
    }

    /** A file holding one non-negative number. */
    static long readLong(Path file) throws IOException {
        return number(file, read(file, VALUE_LIMIT).strip());
    }

    /** A v2 limit file such as memory.max: its number, or 0 for {@code max} (no limit). */
    static long readLimit(Path file) throws IOException {
        String text = read(file, VALUE_LIMIT).strip();
        return text.equals("max") ? 0 : number(file, text);
    }

    /** A file holding one word, such as {@code FROZEN}. */
    static String readWord(Path file) throws IOException {
        String word = read(file, VALUE_LIMIT).strip();
        if (!KEY.matcher(word).matches()) {
            throw new IOException(file + " should hold one word, not " + UserText.quote(word));
        }
        return word;
    }

    /** A table of {@code key number} lines, in file order. */
    static Map<String, Long> readTable(Path file) throws IOException {
        String text = read(file, TABLE_LIMIT);
        Map<String, Long> table = new LinkedHashMap<>();
        int lineNumber = 0;
        for (String line : text.split("\n", -1)) {
            lineNumber++;
            if (line.isEmpty()) {
                continue;
            }
            if (lineNumber > TABLE_LINES) {
                throw new IOException(file + " has more than " + TABLE_LINES + " lines");
            }
            String[] fields = line.split(" ", -1);
            if (fields.length != 2 || !KEY.matcher(fields[0]).matches()) {
                throw new IOException(
                        file + " line " + lineNumber + " should be \"key number\", not " + UserText.quote(line));
            }
            table.put(fields[0], number(file, fields[1]));
        }
        return table;
    }

    /** One entry of a table; an error naming the file when it is missing. */
    static long entry(Path file, Map<String, Long> table, String key) throws IOException {
        Long value = table.get(key);
        if (value == null) {
            throw new IOException(file + " has no " + key + " line");
        }
        return value;
    }

    /**
     * The process IDs in a cgroup.procs file, at most {@link #PIDS_LIMIT} bytes of them: a longer list yields its
     * complete lines, and the caller, which kills what it got and reads again, gets the rest on the next read.
     */
    static List<Long> readPids(Path file) throws IOException {
        Chunk chunk = readChunk(file, PIDS_LIMIT);
        String text = chunk.text;
        if (chunk.truncated) {
            text = text.substring(0, text.lastIndexOf('\n') + 1);
        }
        List<Long> pids = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (!line.isEmpty()) {
                long pid = number(file, line);
                if (pid == 0) {
                    throw new IOException(file + " names process 0");
                }
                pids.add(pid);
            }
        }
        return pids;
    }

    /**
     * Writes {@code value} to an existing cgroup file in one write, as the kernel wants it (each write to
     * cgroup.procs is one PID). A file that is not there is an error: the kernel made every file it supports.
     */
    static void write(Path file, String value) throws IOException {
        if (!exists(file)) {
            throw new NoSuchFileException(file.toString(), null, "no such cgroup file (its controller is missing)");
        }
        byte[] bytes = value.getBytes(StandardCharsets.US_ASCII);
        try (SeekableByteChannel channel = Files.newByteChannel(
                file, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS)) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            int written = channel.write(buffer);
            if (written != bytes.length) {
                throw new IOException(
                        "wrote " + written + " of " + bytes.length + " bytes of " + value + " to " + file);
            }
        } catch (IOException e) {
            throw new IOException("cannot write " + UserText.quote(value) + " to " + file + ": " + reason(e), e);
        }
    }

    /** Whether {@code dir} is a directory itself, not a link to one. */
    static boolean isDirectory(Path dir) {
        return Files.isDirectory(dir, NOFOLLOW);
    }

    /** Fails unless {@code dir} is a real directory: a link there is refused, never followed. */
    static void requireDirectory(Path dir) throws IOException {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(dir, BasicFileAttributes.class, NOFOLLOW);
        } catch (NoSuchFileException e) {
            throw new NoSuchFileException(dir.toString(), null, "no such cgroup");
        }
        if (attributes.isSymbolicLink()) {
            throw new IOException(dir + " is a symbolic link; a cgroup is a directory, and a link is never followed");
        }
        if (!attributes.isDirectory()) {
            throw new IOException(dir + " is not a directory, so it is no cgroup");
        }
    }

    /** Fails when something other than a real directory is at {@code dir}; nothing there is fine. */
    static void requireDirectoryOrAbsent(Path dir) throws IOException {
        if (Files.exists(dir, NOFOLLOW)) {
            requireDirectory(dir);
        }
    }

    /** Makes {@code dir} unless it exists as a real directory; true when it made it. */
    static boolean makeDirectory(Path dir) throws IOException {
        try {
            Files.createDirectory(dir); // mkdir(2): fails on anything already there, a link included
            return true;
        } catch (FileAlreadyExistsException e) {
            requireDirectory(dir);
            return false;
        }
    }

    /**
     * Makes each of {@code dirs} (one cgroup, a directory in each v1 hierarchy) that is not there yet, or none: when
     * one cannot be made, those this call made are removed again (new, they hold no process), so no cgroup is left
     * in only some of its hierarchies. Those there already are taken as they are, and left so.
     */
    static void makeDirectories(Collection<Path> dirs) throws IOException {
        List<Path> made = new ArrayList<>();
        try {
            for (Path dir : dirs) {
                if (makeDirectory(dir)) {
                    made.add(dir);
                }
            }
        } catch (IOException e) {
            for (Path dir : made.reversed()) {
                try {
                    Files.deleteIfExists(dir);
                } catch (IOException undo) {
                    e.addSuppressed(undo);
                }
            }
            throw e;
        }
    }

    /** The kernel's reason alone (for example "Device or resource busy"), without the file name again. */
    static String reason(IOException e) {
        if (e instanceof java.nio.file.FileSystemException fs && fs.getReason() != null) {
            return fs.getReason();
        }
        return String.valueOf(e.getMessage());
    }

    private static long number(Path file, String text) throws IOException {
        if (!NUMBER.matcher(text).matches()) {
            throw new IOException(file + " should hold a non-negative number, not " + UserText.quote(text));
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IOException(file + " holds a number too large: " + UserText.quote(text), e);
        }
    }

    private record Chunk(String text, boolean truncated) {}

    private static Chunk readChunk(Path file, int limit) throws IOException {
        if (Files.isSymbolicLink(file)) {
            throw new IOException(file + " is a symbolic link; cgroup files are never read through a link");
        }
        if (Files.exists(file, NOFOLLOW) && !exists(file)) {
            throw new IOException(file + " is not a regular file, so it is no cgroup file");
        }
        ByteBuffer buffer = ByteBuffer.allocate(limit + 1);
        try (SeekableByteChannel channel =
                Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            while (buffer.hasRemaining() && channel.read(buffer) > 0) {
                // a cgroup file may come in several reads
            }
        } catch (NoSuchFileException e) {
            throw e;
        } catch (IOException e) {
            throw new IOException("cannot read " + file + ": " + reason(e), e);
        }
        boolean truncated = buffer.position() > limit;
        String text = new String(buffer.array(), 0, Math.min(buffer.position(), limit), StandardCharsets.ISO_8859_1);
        return new Chunk(text, truncated);
    }
}
