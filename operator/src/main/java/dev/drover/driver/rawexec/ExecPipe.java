package dev.drover.driver.rawexec;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.File;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A pipe to or from a command run in a task, whose end the agent keeps is non-blocking, so that {@link #close()}
 * ends every read and write at once. The JDK's own process pipes block in {@code read} until every process holding
 * the other end closed it, which a process the command left behind in a session of its own may never do; such a
 * read would hold a thread (and a virtual thread's carrier) for good. Here a read or write that would block parks
 * the thread a little ({@link #MAX_WAIT_MILLIS} at most) and tries again, until the pipe is closed.
 *
 * <p>Made with libc ({@code pipe2}) through {@code java.lang.foreign}; the command's end is handed to {@link
 * ProcessBuilder} as {@code /proc/self/fd/N}, which opens a new, blocking, description of that pipe for the command,
 * and is closed here once the command has started ({@link #started()}). Linux only.
 */
final class ExecPipe implements AutoCloseable {

    /** A command's standard streams without a terminal: its input ({@code /dev/null} when none), output, error. */
    record Streams(Optional<ExecPipe> in, ExecPipe out, ExecPipe err) {

        static Streams open(boolean stdin) throws IOException {
            List<ExecPipe> made = new ArrayList<>(3);
            try {
                Optional<ExecPipe> in = stdin ? Optional.of(add(made, toCommand())) : Optional.empty();
                return new Streams(in, add(made, fromCommand()), add(made, fromCommand()));
            } catch (IOException e) {
                made.forEach(ExecPipe::close);
                throw e;
            }
        }

        private static ExecPipe add(List<ExecPipe> made, ExecPipe pipe) {
            made.add(pipe);
            return pipe;
        }

        /** Gives the command its ends. */
        void redirect(ProcessBuilder pb) {
            pb.redirectInput(in.map(ExecPipe::redirect).orElse(ProcessBuilder.Redirect.from(new File("/dev/null"))))
                    .redirectOutput(out.redirect())
                    .redirectError(err.redirect());
        }

        /** The command has started: the agent lets go of its ends. */
        void started() {
            in.ifPresent(ExecPipe::started);
            out.started();
            err.started();
        }

        /** Ends every read and write. */
        void close() {
            in.ifPresent(ExecPipe::close);
            out.close();
            err.close();
        }
    }

    static final int MAX_WAIT_MILLIS = 20;

    private static final int O_NONBLOCK = 0x800;
    private static final int O_CLOEXEC = 0x80000;
    private static final int EINTR = 4;
    private static final int EAGAIN = 11;
    private static final int CHUNK = 16 * 1024;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MemoryLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno")).withInvokeExactBehavior();
    private static final Linker.Option ERRNO_OPTION = Linker.Option.captureCallState("errno");
    private static final MethodHandle PIPE2 =
            call("pipe2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), ERRNO_OPTION);
    private static final MethodHandle READ =
            call("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), ERRNO_OPTION);
    private static final MethodHandle WRITE =
            call("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), ERRNO_OPTION);
    private static final MethodHandle CLOSE = call("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle FCNTL = LINKER.downcallHandle(
            LINKER.defaultLookup().find("fcntl").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT),
            Linker.Option.firstVariadicArg(2));
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;

    /** The end the agent keeps (non-blocking). */
    private final int own;
    /** The end the command gets, until it has started; -1 after. */
    private int theirs;

    private final boolean toCommand;
    /** Reads and writes hold it shared, {@link #close} exclusively: a descriptor is never used once closed. */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private volatile boolean closed;

    private ExecPipe(int own, int theirs, boolean toCommand) {
        this.own = own;
        this.theirs = theirs;
        this.toCommand = toCommand;
    }

    private static MethodHandle call(String name, FunctionDescriptor f, Linker.Option... options) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), f, options);
    }

    /** A pipe the command writes to (its standard output or error), read here. */
    static ExecPipe fromCommand() throws IOException {
        return open(false);
    }

    /** A pipe the command reads (its standard input), written here. */
    static ExecPipe toCommand() throws IOException {
        return open(true);
    }

    private static ExecPipe open(boolean toCommand) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(8);
            MemorySegment capture = arena.allocate(CAPTURE);
            if ((int) PIPE2.invokeExact(capture, fds, O_CLOEXEC) != 0) {
                throw new IOException("cannot make a pipe: errno " + (int) ERRNO.get(capture, 0L));
            }
            int read = fds.get(JAVA_INT, 0);
            int write = fds.get(JAVA_INT, 4);
            // Only the agent's end is non-blocking: the command opens its end anew, as a description of its own.
            int own = toCommand ? write : read;
            int flags = (int) FCNTL.invokeExact(own, F_GETFL, 0);
            if (flags < 0 || (int) FCNTL.invokeExact(own, F_SETFL, flags | O_NONBLOCK) != 0) {
                closeQuietly(read);
                closeQuietly(write);
                throw new IOException("cannot make a pipe non-blocking");
            }
            return toCommand ? new ExecPipe(write, read, true) : new ExecPipe(read, write, false);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("cannot make a pipe", t);
        }
    }

    /** What {@link ProcessBuilder} gives the command: its end of the pipe. */
    ProcessBuilder.Redirect redirect() {
        File end = new File("/proc/self/fd/" + theirs);
        return toCommand ? ProcessBuilder.Redirect.from(end) : ProcessBuilder.Redirect.to(end);
    }

    /** The command has started (or could not): the agent lets go of the command's end. */
    void started() {
        lock.writeLock().lock();
        try {
            if (theirs >= 0) {
                closeQuietly(theirs);
                theirs = -1;
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** What the command writes; ends when all its writers closed it, or when this pipe is closed. */
    InputStream input() {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                Objects.checkFromIndexSize(off, len, b.length);
                return len == 0 ? 0 : transfer(b, off, Math.min(len, CHUNK));
            }

            @Override
            public void close() {
                ExecPipe.this.close();
            }
        };
    }

    /** What the command reads; closing it ends the command's input. */
    OutputStream output() {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                Objects.checkFromIndexSize(off, len, b.length);
                while (len > 0) {
                    int n = transfer(b, off, Math.min(len, CHUNK));
                    off += n;
                    len -= n;
                }
            }

            @Override
            public void close() {
                ExecPipe.this.close();
            }
        };
    }

    /** One read (-1: the end) or write of at least a byte, waiting as long as the pipe is open. */
    private int transfer(byte[] b, int off, int len) throws IOException {
        long wait = 1;
        while (true) {
            lock.readLock().lock();
            try (Arena arena = Arena.ofConfined()) {
                if (closed) {
                    if (toCommand) {
                        throw new IOException("the command's input is closed");
                    }
                    return -1;
                }
                MemorySegment buf = arena.allocate(len);
                MemorySegment capture = arena.allocate(CAPTURE);
                long n;
                if (toCommand) {
                    MemorySegment.copy(b, off, buf, JAVA_BYTE, 0, len);
                    n = (long) WRITE.invokeExact(capture, own, buf, (long) len);
                } else {
                    n = (long) READ.invokeExact(capture, own, buf, (long) len);
                }
                if (n > 0) {
                    if (!toCommand) {
                        MemorySegment.copy(buf, JAVA_BYTE, 0, b, off, (int) n);
                    }
                    return (int) n;
                }
                if (n == 0 && !toCommand) {
                    return -1; // every writer closed it, and all was read
                }
                int errno = n == 0 ? EAGAIN : (int) ERRNO.get(capture, 0L);
                if (errno != EAGAIN && errno != EINTR) {
                    throw new IOException(
                            "cannot " + (toCommand ? "write to" : "read") + " the command's pipe: errno " + errno);
                }
            } catch (IOException e) {
                throw e;
            } catch (Throwable t) {
                throw new IOException("cannot call " + (toCommand ? "write" : "read"), t);
            } finally {
                lock.readLock().unlock();
            }
            try {
                Thread.sleep(wait); // parks: a virtual thread gives its carrier back meanwhile
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting on the command's pipe");
            }
            wait = Math.min(wait * 2, MAX_WAIT_MILLIS);
        }
    }

    /** Closes both ends, once every read and write in progress has seen that it is closed; reads then end. */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (theirs >= 0) {
                closeQuietly(theirs);
                theirs = -1;
            }
            closeQuietly(own);
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
