package dev.drover.httpapi;

import dev.drover.api.v1alpha1.Names;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A task's output as {@code logs} serves it: the rotated files
 * ({@code alloc/logs/TASK.STREAM.N}, the highest N the oldest, {@code .0}
 * being written) read in order as one stream, the last N lines of it, and
 * what the task writes next. The files are rotated by copy-and-truncate, so
 * a follower that finds {@code .0} shorter than what it has read takes the
 * rest from {@code .1}, where the old content went, and starts {@code .0}
 * again from its beginning. (A task that writes more than the follower had
 * read, between a rotation and the follower's next look, hides that rotation:
 * with a poll of a fraction of a second and files rotated at megabytes, that
 * takes megabytes a second.)
 */
public final class LogFiles {

    private static final int CHUNK = 64 * 1024;

    private final Path dir;
    private final String base;

    /** The files of {@code task}'s {@code stream} ({@code stdout} or {@code stderr}) in {@code logsDir}. */
    public LogFiles(Path logsDir, String task, String stream) {
        if (!Names.isLabel(task)) {
            throw new IllegalArgumentException("\"" + task + "\" is not a task name");
        }
        if (!stream.equals("stdout") && !stream.equals("stderr")) {
            throw new IllegalArgumentException("stream must be stdout or stderr, not \"" + stream + "\"");
        }
        this.dir = logsDir;
        this.base = task + "." + stream + ".";
    }

    /** The files there are, oldest first; the last is {@code .0}. */
    public List<Path> inOrder() {
        List<Path> out = new ArrayList<>();
        for (int i = 1; Files.exists(dir.resolve(base + i)); i++) {
            out.addFirst(dir.resolve(base + i));
        }
        out.add(current());
        return out;
    }

    private Path current() {
        return dir.resolve(base + "0");
    }

    /**
     * Writes the last {@code lines} lines (everything when negative) to {@code out}; returns the position in
     * {@code .0} it stopped at, where {@link #follow} goes on.
     */
    public long tail(int lines, OutputStream out) throws IOException {
        List<Path> files = inOrder();
        long[] sizes = new long[files.size()];
        for (int i = 0; i < files.size(); i++) {
            sizes[i] = Files.exists(files.get(i)) ? Files.size(files.get(i)) : 0;
        }
        int fromFile = 0;
        long fromOffset = 0;
        if (lines == 0) {
            fromFile = files.size() - 1;
            fromOffset = sizes[fromFile];
        } else if (lines > 0) {
            // Back from the end, counting newlines; a newline that ends the output starts no line after it.
            int counted = 0;
            boolean last = true;
            search:
            for (int i = files.size() - 1; i >= 0; i--) {
                try (RandomAccessFile f = open(files.get(i))) {
                    byte[] buffer = new byte[CHUNK];
                    for (long pos = sizes[i]; f != null && pos > 0; ) {
                        int n = (int) Math.min(buffer.length, pos);
                        pos -= n;
                        f.seek(pos);
                        f.readFully(buffer, 0, n);
                        for (int j = n - 1; j >= 0; j--) {
                            boolean newline = buffer[j] == '\n';
                            if (newline && !last && ++counted == lines) {
                                fromFile = i;
                                fromOffset = pos + j + 1;
                                break search;
                            }
                            last = false;
                        }
                    }
                }
            }
        }
        long end = 0;
        for (int i = fromFile; i < files.size(); i++) {
            long start = i == fromFile ? fromOffset : 0;
            end = start + copy(files.get(i), start, sizes[i], out);
        }
        out.flush();
        return end; // where .0 was read to: follow goes on from there
    }

    /**
     * Writes what the task writes after {@code position} in {@code .0}, as it comes, until {@code stop} says so
     * (the client went away, the task is dead and everything is written, the agent stops).
     */
    public void follow(long position, OutputStream out, BooleanSupplier stop, Duration poll) throws IOException {
        long pos = position;
        while (true) {
            long size = Files.exists(current()) ? Files.size(current()) : 0;
            if (size < pos) {
                // Rotated: what was .0 is now .1; take what was written there after pos, then .0 from its start.
                Path previous = dir.resolve(base + "1");
                if (Files.exists(previous)) {
                    long moved = Files.size(previous);
                    if (moved > pos) {
                        copy(previous, pos, moved, out);
                    }
                }
                pos = 0;
                continue;
            }
            if (size > pos) {
                // Only what was read counts: a rotation in the middle cuts the read short, and the rest is in .1.
                pos += copy(current(), pos, size, out);
                out.flush();
            } else if (stop.getAsBoolean()) {
                return;
            } else {
                try {
                    Thread.sleep(poll);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("stopped following " + current());
                }
            }
        }
    }

    /** Copies bytes {@code from} to {@code to} of {@code file}; returns how many there were. */
    private static long copy(Path file, long from, long to, OutputStream out) throws IOException {
        try (RandomAccessFile f = open(file)) {
            if (f == null) {
                return 0;
            }
            f.seek(from);
            byte[] buffer = new byte[CHUNK];
            long left = to - from;
            while (left > 0) {
                int n = f.read(buffer, 0, (int) Math.min(buffer.length, left));
                if (n < 0) {
                    break; // truncated meanwhile: the follower picks the rest up from .1
                }
                out.write(buffer, 0, n);
                left -= n;
            }
            return to - from - left;
        }
    }

    private static RandomAccessFile open(Path file) throws IOException {
        return Files.exists(file) ? new RandomAccessFile(file.toFile(), "r") : null;
    }
}
