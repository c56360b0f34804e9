package dev.drover.driver.host;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The one non-blocking descriptor stream of {@link ExecPipe} and {@link Pty}: the descriptor the agent reads or
 * writes through libc ({@code java.lang.foreign}), non-blocking, and one it holds for the command until {@link
 * #releaseHeld}. {@link #read} and {@link #write} move at least a byte: a try that would block parks the thread a
 * little (at most {@link #MAX_WAIT_MILLIS}, never in native code, so a virtual thread gives its carrier back) and
 * tries again, until the descriptor is closed. A read or write takes the read lock, {@link #close} the write lock,
 * so a descriptor is never used once closed (or once its number is another file's). Linux only.
 */
final class NonBlockingIo implements AutoCloseable {

    static final int MAX_WAIT_MILLIS = 20;
    /** The most one call reads or writes. */
    static final int CHUNK = 16 * 1024;

    static final int O_NONBLOCK = 0x800;
    static final int O_CLOEXEC = 0x80000;
    private static final int EINTR = 4;
    private static final int EIO = 5;
    private static final int EAGAIN = 11;

    static final Linker LINKER = Linker.nativeLinker();
    static final MemoryLayout CAPTURE = Linker.Option.captureStateLayout();
    static final Linker.Option ERRNO_OPTION = Linker.Option.captureCallState("errno");
    private static final VarHandle ERRNO =
            CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno")).withInvokeExactBehavior();
    private static final MethodHandle READ =
            call("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), ERRNO_OPTION);
    private static final MethodHandle WRITE =
            call("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), ERRNO_OPTION);
    private static final MethodHandle CLOSE = call("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    /** What an {@link Attempt} returns when the descriptor was not ready: park, then try again. */
    private static final int NOT_READY = Integer.MIN_VALUE;

    /** One try at a read or write: its result, or {@link #NOT_READY}. */
    @FunctionalInterface
    interface Attempt {
        int attempt() throws IOException;
    }

    /** A write of at least a byte, waiting as long as it takes: {@link #write}, or one with a guard before it. */
    @FunctionalInterface
    interface Transfer {
        int transfer(byte[] b, int off, int len) throws IOException;
    }

    /** What closing an {@link #output} does; it is handed the stream, to write a last byte with. */
    @FunctionalInterface
    interface Closer {
        void close(OutputStream stream) throws IOException;
    }

    /** The end the agent keeps (non-blocking). */
    private final int own;
    /** Reads and writes hold it shared, {@link #close} and {@link #releaseHeld} exclusively. */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    /** The descriptor held for the command; -1 once let go. */
    private int held;
    /** What the descriptor is, for messages: {@code the terminal}. */
    private final String what;

    private volatile boolean closed;
    /** Whether a read met the end: every writer (every terminal's slave) closed it, and all was read. */
    private volatile boolean ended;

    NonBlockingIo(int own, int held, String what) {
        this.own = own;
        this.held = held;
        this.what = what;
    }

    /** The descriptor the agent reads or writes. */
    int own() {
        return own;
    }

    /** The descriptor held for the command; -1 once let go. */
    int held() {
        lock.readLock().lock();
        try {
            return held;
        } finally {
            lock.readLock().unlock();
        }
    }

    boolean closed() {
        return closed;
    }

    /** Lets go of the descriptor held for the command. */
    void releaseHeld() {
        lock.writeLock().lock();
        try {
            if (held >= 0) {
                closeQuietly(held);
                held = -1;
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Closes both descriptors, once every read and write in progress has seen that it is closed. */
    @Override
    public void close() {
        if (lock.isWriteLockedByCurrentThread()) {
            throw new IllegalStateException("close from within a read or write");
        }
        lock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (held >= 0) {
                closeQuietly(held);
                held = -1;
            }
            closeQuietly(own);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Runs {@code attempt} once, under the read lock. */
    int once(Attempt attempt) throws IOException {
        lock.readLock().lock();
        try {
            return attempt.attempt();
        } finally {
            lock.readLock().unlock();
        }
    }

    static MethodHandle call(String name, FunctionDescriptor f, Linker.Option... options) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), f, options);
    }

    /** A libc function of variable arguments, of which the first {@code fixed} are fixed. */
    static MethodHandle callVariadic(String name, FunctionDescriptor f, int fixed, Linker.Option... options) {
        Linker.Option[] all = java.util.Arrays.copyOf(options, options.length + 1);
        all[options.length] = Linker.Option.firstVariadicArg(fixed);
        return call(name, f, all);
    }

    /** The errno a call captured in {@code capture}. */
    static int errno(MemorySegment capture) {
        return (int) ERRNO.get(capture, 0L);
    }

    /**
     * Reads at least a byte, waiting as long as it takes: how many, or -1 at the end, which is when this is closed, or
     * when every writer closed it and all was read: a pipe reads 0 bytes then, a terminal's master fails with {@code
     * EIO} once every descriptor of its slave is closed.
     */
    int read(byte[] b, int off, int len) throws IOException {
        return retrying(() -> {
            if (closed || ended) {
                return -1;
            }
            long n = readOnce(own, b, off, len);
            if (n > 0) {
                return (int) n;
            }
            if (n == 0 || n == -EIO) {
                ended = true;
                return -1;
            }
            if (!again(-n)) {
                throw new IOException("cannot read " + what + ": errno " + -n);
            }
            return NOT_READY;
        });
    }

    /** Writes at least a byte, waiting as long as it takes: how many; once this is closed, none. */
    int write(byte[] b, int off, int len) throws IOException {
        return retrying(() -> {
            if (closed) {
                throw new IOException(what + " is closed");
            }
            long n = writeOnce(own, b, off, len);
            if (n > 0) {
                return (int) n;
            }
            if (!again(-n)) {
                throw new IOException("cannot write to " + what + ": errno " + -n);
            }
            return NOT_READY;
        });
    }

    /** Runs {@code attempt} under the read lock until it returns a result, parking between tries. */
    private int retrying(Attempt attempt) throws IOException {
        long wait = 1;
        while (true) {
            int result = once(attempt);
            if (result != NOT_READY) {
                return result;
            }
            try {
                Thread.sleep(wait); // parks: a virtual thread gives its carrier back meanwhile
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting on " + what);
            }
            wait = Math.min(wait * 2, MAX_WAIT_MILLIS);
        }
    }

    /** One {@code read} of at most {@code len} bytes: how many (more than 0), 0 at the end, or minus the errno. */
    private static long readOnce(int fd, byte[] b, int off, int len) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(len);
            MemorySegment capture = arena.allocate(CAPTURE);
            long n = (long) READ.invokeExact(capture, fd, buf, (long) len);
            if (n > 0) {
                MemorySegment.copy(buf, JAVA_BYTE, 0, b, off, (int) n);
            }
            return n < 0 ? -errno(capture) : n;
        } catch (Throwable t) {
            throw new IOException("cannot call read", t);
        }
    }

    /** One {@code write} of at most {@code len} bytes: how many (more than 0), or minus the errno. */
    private static long writeOnce(int fd, byte[] b, int off, int len) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(len);
            MemorySegment.copy(b, off, buf, JAVA_BYTE, 0, len);
            MemorySegment capture = arena.allocate(CAPTURE);
            long n = (long) WRITE.invokeExact(capture, fd, buf, (long) len);
            return n > 0 ? n : n == 0 ? -EAGAIN : -errno(capture);
        } catch (Throwable t) {
            throw new IOException("cannot call write", t);
        }
    }

    /** Whether {@code errno} means only that the call is to be tried again. */
    private static boolean again(long errno) {
        return errno == EAGAIN || errno == EINTR;
    }

    /** What is read here ({@link #read}, at most {@link #CHUNK} at a time); closing it closes both descriptors. */
    InputStream input() {
        NonBlockingIo fds = this;
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                Objects.checkFromIndexSize(off, len, b.length);
                return len == 0 ? 0 : fds.read(b, off, Math.min(len, CHUNK));
            }

            @Override
            public void close() {
                fds.close();
            }
        };
    }

    /** A stream that writes all it is given with {@code write} (at most {@link #CHUNK} at a time). */
    static OutputStream output(Transfer write, Closer close) {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                Objects.checkFromIndexSize(off, len, b.length);
                while (len > 0) {
                    int n = write.transfer(b, off, Math.min(len, CHUNK));
                    off += n;
                    len -= n;
                }
            }

            @Override
            public void close() throws IOException {
                close.close(this);
            }
        };
    }

    static void closeQuietly(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            // close cannot fail in a way that leaves the descriptor open on Linux
        }
    }
}
