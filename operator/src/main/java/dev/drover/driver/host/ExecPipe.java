package dev.drover.driver.host;

import static dev.drover.driver.host.NonBlockingIo.CAPTURE;
import static dev.drover.driver.host.NonBlockingIo.ERRNO_OPTION;
import static dev.drover.driver.host.NonBlockingIo.O_CLOEXEC;
import static dev.drover.driver.host.NonBlockingIo.O_NONBLOCK;
import static dev.drover.driver.host.NonBlockingIo.call;
import static dev.drover.driver.host.NonBlockingIo.callVariadic;
import static dev.drover.driver.host.NonBlockingIo.closeQuietly;
import static dev.drover.driver.host.NonBlockingIo.errno;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A pipe to or from a command run in a task, whose end the agent keeps is non-blocking, so that {@link #close()}
 * ends every read and write at once. The JDK's own process pipes block in {@code read} until every process holding
 * the other end closed it, which a process the command left behind in a session of its own may never do; such a
 * read would hold a thread (and a virtual thread's carrier) for good. Here, through {@link NonBlockingIo} as a
 * terminal's master, a read or write that would block parks the thread a little ({@link #MAX_WAIT_MILLIS} at most)
 * and tries again, until the pipe is closed.
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

    static final int MAX_WAIT_MILLIS = NonBlockingIo.MAX_WAIT_MILLIS;

    private static final MethodHandle PIPE2 =
            call("pipe2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), ERRNO_OPTION);
    private static final MethodHandle FCNTL =
            callVariadic("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), 2);
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final String WHAT = "the command's pipe";

    /** The agent's end, and the command's until it has started. */
    private final NonBlockingIo fds;

    private final boolean toCommand;

    private ExecPipe(NonBlockingIo fds, boolean toCommand) {
        this.fds = fds;
        this.toCommand = toCommand;
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
                throw new IOException("cannot make a pipe: errno " + errno(capture));
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
            return new ExecPipe(
                    toCommand ? new NonBlockingIo(write, read, WHAT) : new NonBlockingIo(read, write, WHAT), toCommand);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("cannot make a pipe", t);
        }
    }

    /** What {@link ProcessBuilder} gives the command: its end of the pipe. */
    ProcessBuilder.Redirect redirect() {
        File end = new File("/proc/self/fd/" + fds.held());
        return toCommand ? ProcessBuilder.Redirect.from(end) : ProcessBuilder.Redirect.to(end);
    }

    /** The command has started (or could not): the agent lets go of the command's end. */
    void started() {
        fds.releaseHeld();
    }

    /** What the command writes; ends when all its writers closed it, or when this pipe is closed. */
    InputStream input() {
        return fds.input();
    }

    /** What the command reads; closing it ends the command's input. */
    OutputStream output() {
        return NonBlockingIo.output(fds::write, stream -> close());
    }

    /** Closes both ends, once every read and write in progress has seen that it is closed; reads then end. */
    @Override
    public void close() {
        fds.close();
    }
}
