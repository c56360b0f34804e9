package dev.drover.network;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A short command run to its end: stdin given whole, stdout and stderr each kept up to a limit (the rest is read and
 * dropped, so the command never blocks on a full pipe), and a time limit past which the command and its children are
 * killed. What it writes is hostile input: nothing here parses it.
 *
 * <p>Three virtual threads feed and drain the pipes; each ends when its pipe closes, which the command's end (or its
 * kill) brings about. A descendant that escaped the kill (re-parented away from the command) and still holds a pipe
 * keeps its reader until it lets go; the run does not wait for it past {@link #DRAIN_GRACE}.
 */
final class BoundedProcess {

    /** How long the readers may take to see the pipes close once the command is gone. */
    static final Duration DRAIN_GRACE = Duration.ofSeconds(5);

    /** How a run ended: the exit status (-1 when killed for its time), what it wrote, and whether that was cut. */
    record Outcome(int exit, boolean timedOut, String stdout, boolean stdoutCut, String stderr, boolean stderrCut) {}

    private BoundedProcess() {}

    /**
     * Runs {@code argv} with exactly {@code env} as its environment.
     *
     * @throws IOException when it cannot start (the message names the program)
     */
    static Outcome run(List<String> argv, Map<String, String> env, byte[] stdin, Duration limit, int maxOutput)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        Capture out = new Capture(p.getInputStream(), maxOutput);
        Capture err = new Capture(p.getErrorStream(), maxOutput);
        Thread feeder = Thread.ofVirtual().name("cni-stdin").start(() -> feed(p.getOutputStream(), stdin));
        Thread outReader = Thread.ofVirtual().name("cni-stdout").start(out);
        Thread errReader = Thread.ofVirtual().name("cni-stderr").start(err);
        boolean timedOut = false;
        try {
            if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                timedOut = true;
                kill(p);
            }
        } catch (InterruptedException e) {
            kill(p);
            throw e;
        } finally {
            long deadline = System.nanoTime() + DRAIN_GRACE.toNanos();
            for (Thread t : List.of(feeder, outReader, errReader)) {
                long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                if (!t.join(Duration.ofMillis(left))) {
                    t.interrupt(); // a feeder blocked on a pipe nobody reads; readers end when the pipe closes
                }
            }
        }
        return new Outcome(timedOut ? -1 : p.exitValue(), timedOut, out.text(), out.cut(), err.text(), err.cut());
    }

    private static void kill(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        try {
            p.waitFor(DRAIN_GRACE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void feed(OutputStream in, byte[] stdin) {
        try (in) {
            in.write(stdin);
        } catch (IOException e) {
            // the command closed its stdin unread, or died: what it wrote and its status say what happened
        }
    }

    /** Reads a stream to its end, keeping its first {@code max} bytes. */
    private static final class Capture implements Runnable {
        private final InputStream in;
        private final int max;
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        private volatile boolean cut;

        Capture(InputStream in, int max) {
            this.in = in;
            this.max = max;
        }

        @Override
        public void run() {
            byte[] buf = new byte[8192];
            try (in) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    synchronized (kept) {
                        int keep = Math.min(n, max - kept.size());
                        if (keep > 0) {
                            kept.write(buf, 0, keep);
                        }
                        if (keep < n) {
                            cut = true;
                        }
                    }
                }
            } catch (IOException e) {
                // the pipe broke: what was read is what there is
            }
        }

        String text() {
            synchronized (kept) {
                return kept.toString(StandardCharsets.UTF_8);
            }
        }

        boolean cut() {
            return cut;
        }
    }
}
