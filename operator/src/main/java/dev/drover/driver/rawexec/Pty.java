package dev.drover.driver.rawexec;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A pseudo-terminal for a command run with a terminal ({@code tty}): Java has none, so it is made with libc through
 * {@code java.lang.foreign} ({@code posix_openpt}, {@code grantpt}, {@code unlockpt}, {@code ptsname_r}). The agent
 * keeps the master: what the command writes to its terminal is read from {@link #output()}, what is written to
 * {@link #input()} is typed on it, and {@link #resize} sets its size ({@code TIOCSWINSZ}: the command gets SIGWINCH).
 * The command opens the slave, {@link #slave()}, by itself, as a new session's leader, so that it becomes its
 * controlling terminal; the agent opens it only with {@code O_NOCTTY} (never its own terminal) and holds it open
 * until {@link #commandEnded()}, so the master's end ({@code EIO}) means the command and all it started closed it.
 *
 * <p>Both descriptors are non-blocking: a read or write that would block parks the thread (at most {@link
 * #POLL_MILLIS} at a time, never in native code, so a virtual thread gives its carrier back) and tries again. A
 * {@link #close()} from another thread ends a read or write within that time, and only then are the descriptors
 * closed, so none is used after it is closed (or once its number is another file's). Linux only (x86-64, arm64).
 */
final class Pty implements AutoCloseable {

    static final int POLL_MILLIS = 20;
    /** What {@link #input()}'s close types: VEOF (Ctrl-D), the end of input for a command reading the terminal. */
    static final int END_OF_INPUT = 4;

    private static final int O_RDWR = 2;
    private static final int O_NOCTTY = 0x100;
    private static final int O_NONBLOCK = 0x800;
    private static final int O_CLOEXEC = 0x80000;
    private static final long TIOCSWINSZ = 0x5414;
    private static final int EINTR = 4;
    private static final int EIO = 5;
    private static final int EAGAIN = 11;
    private static final int CHUNK = 16 * 1024;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MemoryLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno")).withInvokeExactBehavior();
    private static final Linker.Option ERRNO_OPTION = Linker.Option.captureCallState("errno");
    private static final MethodHandle POSIX_OPENPT = call("posix_openpt", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle GRANTPT = call("grantpt", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle UNLOCKPT = call("unlockpt", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle PTSNAME_R =
            call("ptsname_r", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle OPEN = LINKER.downcallHandle(
            LINKER.defaultLookup().find("open").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            ERRNO_OPTION,
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle READ =
            call("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), ERRNO_OPTION);
    private static final MethodHandle WRITE =
            call("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), ERRNO_OPTION);
    private static final MethodHandle IOCTL = LINKER.downcallHandle(
            LINKER.defaultLookup().find("ioctl").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS),
            ERRNO_OPTION,
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle CLOSE = call("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private final int master;
    private final Path slave;
    /** Reads and writes hold it shared, {@link #close} and {@link #commandEnded} exclusively. */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private int heldSlave;
    private volatile boolean closed;
    private volatile boolean inputClosed;
    private volatile boolean outputEnded;

    private Pty(int master, Path slave, int heldSlave) {
        this.master = master;
        this.slave = slave;
        this.heldSlave = heldSlave;
    }

    private static MethodHandle call(String name, FunctionDescriptor f, Linker.Option... options) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), f, options);
    }

    /** A new terminal: its master open here, its slave unlocked for the command to open. */
    static Pty open() throws IOException {
        int master;
        try {
            master = (int) POSIX_OPENPT.invokeExact(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        } catch (Throwable t) {
            throw new IOException("cannot call posix_openpt", t);
        }
        if (master < 0) {
            throw new IOException("cannot open a pseudo-terminal (posix_openpt failed: no /dev/ptmx, or none left)");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment name = arena.allocate(128);
            if ((int) GRANTPT.invokeExact(master) != 0
                    || (int) UNLOCKPT.invokeExact(master) != 0
                    || (int) PTSNAME_R.invokeExact(master, name, 128L) != 0) {
                throw new IOException("cannot set up a pseudo-terminal (grantpt, unlockpt or ptsname_r failed)");
            }
            String path = name.getString(0);
            if (!path.startsWith("/dev/pts/")) {
                throw new IOException("a pseudo-terminal named " + path + ", not /dev/pts/N");
            }
            MemorySegment capture = arena.allocate(CAPTURE);
            int held = (int) OPEN.invokeExact(capture, arena.allocateFrom(path), O_RDWR | O_NOCTTY | O_CLOEXEC, 0);
            if (held < 0) {
                throw new IOException("cannot open " + path + ": errno " + (int) ERRNO.get(capture, 0L));
            }
            return new Pty(master, Path.of(path), held);
        } catch (IOException e) {
            closeQuietly(master);
            throw e;
        } catch (Throwable t) {
            closeQuietly(master);
            throw new IOException("cannot set up a pseudo-terminal", t);
        }
    }

    /** The slave's path, {@code /dev/pts/N}, for the command to open. */
    Path slave() {
        return slave;
    }

    /**
     * The command has exited: the agent lets go of the slave, so the output ends once whatever it started has
     * closed the terminal too, and all it wrote has been read.
     */
    void commandEnded() {
        lock.writeLock().lock();
        try {
            if (heldSlave >= 0) {
                closeQuietly(heldSlave);
                heldSlave = -1;
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Sets the terminal's size; values are cut to what the kernel holds (0 to 65535). */
    void resize(int columns, int rows) throws IOException {
        lock.readLock().lock();
        try (Arena arena = Arena.ofConfined()) {
            if (closed) {
                throw new IOException("the terminal is closed");
            }
            MemorySegment size = arena.allocate(8);
            size.set(JAVA_SHORT, 0, (short) Math.clamp(rows, 0, 65535));
            size.set(JAVA_SHORT, 2, (short) Math.clamp(columns, 0, 65535));
            MemorySegment capture = arena.allocate(CAPTURE);
            if ((int) IOCTL.invokeExact(capture, master, TIOCSWINSZ, size) != 0) {
                throw new IOException("cannot set the terminal's size: errno " + (int) ERRNO.get(capture, 0L));
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("cannot call ioctl", t);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** What the terminal shows: the command's output and errors. */
    InputStream output() {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                Objects.checkFromIndexSize(off, len, b.length);
                return len == 0 ? 0 : readMaster(b, off, Math.min(len, CHUNK));
            }

            @Override
            public void close() {
                Pty.this.close();
            }
        };
    }

    /** What is typed on the terminal; closing it types {@link #END_OF_INPUT} once. */
    OutputStream input() {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                Objects.checkFromIndexSize(off, len, b.length);
                if (inputClosed) {
                    throw new IOException("the terminal's input is closed");
                }
                while (len > 0) {
                    int n = writeMaster(b, off, Math.min(len, CHUNK));
                    off += n;
                    len -= n;
                }
            }

            @Override
            public void close() throws IOException {
                if (!inputClosed && !closed) {
                    write(END_OF_INPUT);
                }
                inputClosed = true;
            }
        };
    }

    private int readMaster(byte[] b, int off, int len) throws IOException {
        long wait = 1;
        while (true) {
            lock.readLock().lock();
            try (Arena arena = Arena.ofConfined()) {
                if (closed || outputEnded) {
                    return -1;
                }
                MemorySegment buf = arena.allocate(len);
                MemorySegment capture = arena.allocate(CAPTURE);
                long n = (long) READ.invokeExact(capture, master, buf, (long) len);
                if (n > 0) {
                    MemorySegment.copy(buf, JAVA_BYTE, 0, b, off, (int) n);
                    return (int) n;
                }
                int errno = n == 0 ? EIO : (int) ERRNO.get(capture, 0L);
                if (errno == EIO) {
                    outputEnded = true; // every slave descriptor is closed and all was read
                    return -1;
                }
                if (errno != EAGAIN && errno != EINTR) {
                    throw new IOException("cannot read the terminal: errno " + errno);
                }
            } catch (IOException e) {
                throw e;
            } catch (Throwable t) {
                throw new IOException("cannot call read", t);
            } finally {
                lock.readLock().unlock();
            }
            wait = await(wait);
        }
    }

    private int writeMaster(byte[] b, int off, int len) throws IOException {
        long wait = 1;
        while (true) {
            lock.readLock().lock();
            try (Arena arena = Arena.ofConfined()) {
                if (closed) {
                    throw new IOException("the terminal is closed");
                }
                MemorySegment buf = arena.allocate(len);
                MemorySegment.copy(b, off, buf, JAVA_BYTE, 0, len);
                MemorySegment capture = arena.allocate(CAPTURE);
                long n = (long) WRITE.invokeExact(capture, master, buf, (long) len);
                if (n > 0) {
                    return (int) n;
                }
                int errno = n == 0 ? EAGAIN : (int) ERRNO.get(capture, 0L);
                if (errno != EAGAIN && errno != EINTR) {
                    throw new IOException("cannot write to the terminal: errno " + errno);
                }
            } catch (IOException e) {
                throw e;
            } catch (Throwable t) {
                throw new IOException("cannot call write", t);
            } finally {
                lock.readLock().unlock();
            }
            wait = await(wait);
        }
    }

    /** Parks {@code millis} (the terminal was not ready), and returns how long to park the next time. */
    private static long await(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting on the terminal");
        }
        return Math.min(millis * 2, POLL_MILLIS);
    }

    /** Closes both descriptors, once every read and write in progress has seen that it is closed. */
    @Override
    public void close() {
        if (lock.isWriteLockedByCurrentThread()) {
            throw new IllegalStateException("close from within a terminal operation");
        }
        lock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (heldSlave >= 0) {
                closeQuietly(heldSlave);
                heldSlave = -1;
            }
            closeQuietly(master);
        } finally {
            lock.writeLock().unlock();
        }
    }

    private static void closeQuietly(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            // close cannot fail in a way that leaves the descriptor open on Linux
        }
    }
}
