package dev.drover.driver.host;

import dev.drover.concurrent.Worker;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps task logs bounded: when {@code <task>.stdout.0} grows past the size
 * limit, its contents move to {@code .1} (older files shift up, the oldest
 * beyond the count is dropped) and {@code .0} is truncated. Copy and truncate,
 * rather than rename, because the task keeps writing to {@code .0} (opened for
 * append, so it writes at the new end) and may outlive the agent. A line
 * written between the copy and the truncate can be lost; that is the price of
 * rotating files a process holds open. One thread checks every watched file.
 */
public final class LogRotator implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LogRotator.class);

    private static final Set<PosixFilePermission> MODE = PosixFilePermissions.fromString("rw-r-----");

    private final long maxBytes;
    private final int maxFiles;
    private final Duration interval;
    private final Set<Path> watched = ConcurrentHashMap.newKeySet();
    private final Worker worker;

    /**
     * @param maxBytes size past which {@code .0} is rotated
     * @param maxFiles how many files to keep per stream, {@code .0} included (at least 1)
     */
    public LogRotator(long maxBytes, int maxFiles, Duration interval) {
        if (maxFiles < 1 || maxBytes < 1) {
            throw new IllegalArgumentException("log rotation needs maxBytes >= 1 and maxFiles >= 1");
        }
        this.maxBytes = maxBytes;
        this.maxFiles = maxFiles;
        this.interval = interval;
        this.worker = Worker.startPlatform("drover-log-rotator", self -> rotateAll());
    }

    public void watch(Path current) {
        watched.add(current);
    }

    public void forget(Path current) {
        watched.remove(current);
    }

    /**
     * Creates the log {@code file} if it does not exist and makes it 0640 either way: logs may show what a task
     * printed of its secrets. Set explicitly, not left to the umask (whoever writes first would decide).
     */
    public static void prepare(Path file) throws IOException {
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            try {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(MODE));
            } catch (FileAlreadyExistsException e) {
                // created meanwhile by the task's writer: its mode is set just below
            }
        }
        Files.setPosixFilePermissions(file, MODE);
    }

    /** Rotates every watched file that is full, then waits the interval. */
    private void rotateAll() throws InterruptedException {
        for (Path p : watched) {
            try {
                rotateIfFull(p);
            } catch (IOException e) {
                LOG.warn("could not rotate {}: {}", p, e.toString());
            }
        }
        Thread.sleep(interval);
    }

    /** Rotates {@code current} (a {@code .0} file) if it is over the limit. */
    void rotateIfFull(Path current) throws IOException {
        if (!Files.exists(current) || Files.size(current) <= maxBytes) {
            return;
        }
        String base = current.getFileName().toString().replaceFirst("\\.0$", "");
        Path dir = current.getParent();
        if (maxFiles > 1) {
            Files.deleteIfExists(dir.resolve(base + "." + (maxFiles - 1)));
            for (int i = maxFiles - 2; i >= 1; i--) {
                Path from = dir.resolve(base + "." + i);
                if (Files.exists(from)) {
                    Files.move(from, dir.resolve(base + "." + (i + 1)), StandardCopyOption.REPLACE_EXISTING);
                }
            }
            Path first = dir.resolve(base + ".1");
            Files.deleteIfExists(first);
            try (FileChannel in = FileChannel.open(current, StandardOpenOption.READ);
                    FileChannel out = FileChannel.open(
                            first,
                            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                            PosixFilePermissions.asFileAttribute(MODE))) {
                long size = in.size();
                for (long done = 0; done < size; ) {
                    done += in.transferTo(done, size - done, out);
                }
            }
            Files.setPosixFilePermissions(first, MODE);
        }
        try (FileChannel ch = FileChannel.open(current, StandardOpenOption.WRITE)) {
            ch.truncate(0);
        }
    }

    @Override
    public void close() {
        worker.close();
    }
}
