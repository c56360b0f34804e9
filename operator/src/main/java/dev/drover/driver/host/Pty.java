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
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * A pseudo-terminal for a command run with a terminal ({@code tty}): Java has none, so it is made with libc through
 * {@code java.lang.foreign} ({@code posix_openpt}, {@code grantpt}, {@code unlockpt}, {@code ptsname_r}). The agent
 * keeps the master: what the command writes to its terminal is read from {@link #output()}, what is written to
 * {@link #input()} is typed on it, and {@link #resize} sets its size ({@code TIOCSWINSZ}: the command gets SIGWINCH).
 * The command opens the slave, {@link #slave()}, by itself, as a new session's leader, so that it becomes its
 * controlling terminal; the agent opens it only with {@code O_NOCTTY} (never its own terminal) and holds it open
 * until {@link #commandEnded()}, so the master's end ({@code EIO}) means the command and all it started closed it.
 *
 * <p>The master is read and written as a command's pipes are, through {@link NonBlockingIo}: non-blocking, a read or
 * write that would block parks the thread (at most {@link #POLL_MILLIS} at a time, never in native code, so a virtual
 * thread gives its carrier back) and tries again. A {@link #close()} from another thread ends a read or write within
 * that time, and only then are the descriptors closed, so none is used after it is closed (or once its number is
 * another file's). Linux only (x86-64, arm64).
 *
 * <p>A terminal {@linkplain #forRelay() for a relay} is one that a program (the OCI runtime's {@code exec -t}) sets
 * raw and copies to a terminal of its own, where the command runs: its end of input is typed only once the relay has
 * set it raw, so that it is copied, and the command's terminal reads it as its end; typed before, it would end the
 * relay's reading instead, and the command's input would never end.
 */
final class Pty implements AutoCloseable {

    static final int POLL_MILLIS = NonBlockingIo.MAX_WAIT_MILLIS;
    /** What {@link #input()}'s close types: VEOF (Ctrl-D), the end of input for a command reading the terminal. */
    static final int END_OF_INPUT = 4;

    private static final int O_RDWR = 2;
    private static final int O_NOCTTY = 0x100;
    private static final long TIOCSWINSZ = 0x5414;
    private static final long TCGETS = 0x5401;
    /** In {@code c_lflag}, the fourth word of {@code struct termios}: line by line, with Ctrl-D the end of input. */
    private static final int ICANON = 2;
    /** How long a relay has to set the terminal raw, after which the end of input is typed anyway. */
    private static final long RELAY_WAIT_NANOS = 10_000_000_000L;

    private static final MethodHandle POSIX_OPENPT = call("posix_openpt", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle GRANTPT = call("grantpt", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle UNLOCKPT = call("unlockpt", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle PTSNAME_R =
            call("ptsname_r", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle OPEN =
            callVariadic("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), 2, ERRNO_OPTION);
    private static final MethodHandle IOCTL =
            callVariadic("ioctl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), 2, ERRNO_OPTION);

    /** The master, and the slave held open until the command ended. */
    private final NonBlockingIo fds;

    private final Path slave;
    private final boolean relayed;
    private volatile boolean inputClosed;

    private Pty(int master, Path slave, int heldSlave, boolean relayed) {
        this.fds = new NonBlockingIo(master, heldSlave, "the terminal");
        this.slave = slave;
        this.relayed = relayed;
    }

    /** A new terminal: its master open here, its slave unlocked for the command to open. */
    static Pty open() throws IOException {
        return open(false);
    }

    /** A new terminal for a program that relays it to the command's own (see the class's description). */
    static Pty forRelay() throws IOException {
        return open(true);
    }

    private static Pty open(boolean relayed) throws IOException {
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
                throw new IOException("cannot open " + path + ": errno " + errno(capture));
            }
            return new Pty(master, Path.of(path), held, relayed);
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
        fds.releaseHeld();
    }

    /** Sets the terminal's size; values are cut to what the kernel holds (0 to 65535). */
    void resize(int columns, int rows) throws IOException {
        fds.once(() -> {
            if (fds.closed()) {
                throw new IOException("the terminal is closed");
            }
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment size = arena.allocate(8);
                size.set(JAVA_SHORT, 0, (short) Math.clamp(rows, 0, 65535));
                size.set(JAVA_SHORT, 2, (short) Math.clamp(columns, 0, 65535));
                MemorySegment capture = arena.allocate(CAPTURE);
                if ((int) IOCTL.invokeExact(capture, fds.own(), TIOCSWINSZ, size) != 0) {
                    throw new IOException("cannot set the terminal's size: errno " + errno(capture));
                }
                return 0;
            } catch (IOException e) {
                throw e;
            } catch (Throwable t) {
                throw new IOException("cannot call ioctl", t);
            }
        });
    }

    /** What the terminal shows: the command's output and errors. */
    InputStream output() {
        return fds.input();
    }

    /**
     * What is typed on the terminal; closing it types {@link #END_OF_INPUT} once: at once, or for a relay on a thread
     * of its own once the relay set the terminal raw (within {@link #RELAY_WAIT_NANOS}; it ends when the terminal is
     * closed).
     */
    OutputStream input() {
        return NonBlockingIo.output(this::type, stream -> {
            if (inputClosed || fds.closed()) {
                inputClosed = true;
            } else if (relayed) {
                inputClosed = true;
                Thread.ofVirtual().name("pty-end-of-input").start(this::endInputOnceRaw);
            } else {
                stream.write(END_OF_INPUT);
                inputClosed = true;
            }
        });
    }

    private void endInputOnceRaw() {
        long deadline = System.nanoTime() + RELAY_WAIT_NANOS;
        try {
            while (canonical() && System.nanoTime() - deadline < 0) {
                Thread.sleep(POLL_MILLIS);
            }
            fds.write(new byte[] {END_OF_INPUT}, 0, 1);
        } catch (IOException e) {
            // the terminal was closed meanwhile: there is no input to end
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the terminal reads line by line, as it does until a relay sets it raw. */
    private boolean canonical() throws IOException {
        return fds.once(() -> {
                    if (fds.closed()) {
                        throw new IOException("the terminal is closed");
                    }
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment termios = arena.allocate(64);
                        MemorySegment capture = arena.allocate(CAPTURE);
                        if ((int) IOCTL.invokeExact(capture, fds.own(), TCGETS, termios) != 0) {
                            throw new IOException("cannot read the terminal's settings: errno " + errno(capture));
                        }
                        return termios.get(JAVA_INT, 12) & ICANON;
                    } catch (IOException e) {
                        throw e;
                    } catch (Throwable t) {
                        throw new IOException("cannot call ioctl", t);
                    }
                })
                != 0;
    }

    private int type(byte[] b, int off, int len) throws IOException {
        if (inputClosed) {
            throw new IOException("the terminal's input is closed");
        }
        return fds.write(b, off, len);
    }

    /** Closes both descriptors, once every read and write in progress has seen that it is closed. */
    @Override
    public void close() {
        fds.close();
    }
}
