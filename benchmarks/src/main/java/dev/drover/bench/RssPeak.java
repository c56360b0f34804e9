package dev.drover.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The agent's peak resident set: {@code VmRSS} of {@code /proc/PID/status}, read every 100 ms from a thread of its
 * own while the bench runs; {@link #watch} moves it to a restarted agent.
 */
final class RssPeak implements AutoCloseable {

    private static final Pattern VM_RSS = Pattern.compile("(?m)^VmRSS:\\s+([0-9]+) kB$");

    private final AtomicLong peak = new AtomicLong();
    private volatile long pid;
    private final Thread thread;

    RssPeak(long pid) {
        this.pid = pid;
        thread = Thread.ofPlatform().daemon().name("bench-rss").start(this::sample);
    }

    void watch(long newPid) {
        pid = newPid;
    }

    /** The highest VmRSS seen, in bytes; 0 where {@code /proc} has none (not Linux). */
    long peakBytes() {
        peak.accumulateAndGet(rssBytes(pid), Math::max);
        return peak.get();
    }

    private void sample() {
        while (!Thread.currentThread().isInterrupted()) {
            peak.accumulateAndGet(rssBytes(pid), Math::max);
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** VmRSS of process {@code pid} in bytes; 0 when it is gone or {@code /proc} cannot tell. */
    static long rssBytes(long pid) {
        try {
            return parse(Files.readString(Path.of("/proc", Long.toString(pid), "status")));
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    static long parse(String status) {
        Matcher m = VM_RSS.matcher(status);
        return m.find() ? Long.parseLong(m.group(1)) * 1024 : 0;
    }

    @Override
    public void close() throws InterruptedException {
        thread.interrupt();
        thread.join(5_000);
    }
}
