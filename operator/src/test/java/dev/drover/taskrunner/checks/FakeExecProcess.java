package dev.drover.taskrunner.checks;

import dev.drover.driver.ExecProcess;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/** A command for exec probes: its output, its exit, and whether it was closed (killed), as the test says. */
final class FakeExecProcess implements ExecProcess {

    final CompletableFuture<Integer> exit = new CompletableFuture<>();
    final CountDownLatch closed = new CountDownLatch(1);
    private InputStream stdout;
    private InputStream stderr;

    FakeExecProcess(InputStream stdout, InputStream stderr) {
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /** A command that wrote {@code out} and {@code err}, then exited with {@code code}. */
    static FakeExecProcess exited(int code, String out, String err) {
        FakeExecProcess p = new FakeExecProcess(text(out), text(err));
        p.exit.complete(code);
        return p;
    }

    /** A command that writes nothing, holds its streams open and never exits until it is closed. */
    static FakeExecProcess hanging() {
        FakeExecProcess p = new FakeExecProcess(null, null);
        p.stdout = p.untilClosed();
        p.stderr = p.untilClosed();
        return p;
    }

    /**
     * A command that wrote {@code out} and exited 0, whose output a process it left behind holds open even once it
     * is closed: a read after {@code out} waits until interrupted; {@code ended} counts down when it gives up.
     */
    static FakeExecProcess outlived(String out, CountDownLatch ended) {
        InputStream held = new InputStream() {
            private final InputStream written = text(out);

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (written.available() > 0) { // what was written comes at once, as from a pipe
                    return written.read(b, off, len);
                }
                try {
                    new CountDownLatch(1).await(); // no one ever ends it
                    return -1;
                } catch (InterruptedException e) {
                    ended.countDown();
                    throw new java.io.InterruptedIOException();
                }
            }
        };
        FakeExecProcess p = new FakeExecProcess(held, text(""));
        p.exit.complete(0);
        return p;
    }

    static InputStream text(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    /** A stream that ends only when this process is closed. */
    private InputStream untilClosed() {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                try {
                    closed.await();
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException();
                }
                return -1;
            }
        };
    }

    /** A stream of {@code total} bytes of 'y', made as they are read, never held; {@code read} counts them. */
    static InputStream endless(long total, AtomicLong read) {
        return new InputStream() {
            @Override
            public int read() {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0];
            }

            @Override
            public int read(byte[] b, int off, int len) {
                long left = total - read.get();
                if (left <= 0) {
                    return -1;
                }
                int n = (int) Math.min(len, left);
                java.util.Arrays.fill(b, off, off + n, (byte) 'y');
                read.addAndGet(n);
                return n;
            }
        };
    }

    boolean isClosed() {
        return closed.getCount() == 0;
    }

    @Override
    public OutputStream stdin() {
        return OutputStream.nullOutputStream();
    }

    @Override
    public InputStream stdout() {
        return stdout;
    }

    @Override
    public InputStream stderr() {
        return stderr;
    }

    @Override
    public void resize(int columns, int rows) {}

    @Override
    public CompletableFuture<Integer> exit() {
        return exit;
    }

    @Override
    public void close() {
        closed.countDown();
        exit.complete(137); // killed
    }
}
