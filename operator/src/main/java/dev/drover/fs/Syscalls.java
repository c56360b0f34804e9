package dev.drover.fs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

/**
 * The system calls {@link DirectoryHandle} makes itself, through the foreign function API, because Java's file API
 * has no way to ask for them: {@code openat(2)} relative to an open descriptor with the flags it needs
 * ({@code O_DIRECTORY}, {@code O_NOFOLLOW}, {@code O_NONBLOCK}), and {@code close(2)} of what it opened. Every
 * descriptor is opened {@code O_CLOEXEC}, so a task the agent starts inherits none. The flag values are Linux's, on
 * x86-64 and arm64.
 */
final class Syscalls {

    static final int AT_FDCWD = -100;
    static final int O_WRONLY = 1;
    static final int O_CREAT = 0x40;
    static final int O_EXCL = 0x80;
    static final int O_NONBLOCK = 0x800;
    private static final int O_CLOEXEC = 0x80000;
    private static final boolean ARM = "aarch64".equals(System.getProperty("os.arch"));
    static final int O_DIRECTORY = ARM ? 0x4000 : 0x10000;
    static final int O_NOFOLLOW = ARM ? 0x8000 : 0x20000;
    static final int ENOENT = 2;
    static final int EEXIST = 17;
    static final int ENOTDIR = 20;
    static final int ELOOP = 40;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MemoryLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno")).withInvokeExactBehavior();
    private static final MethodHandle OPENAT = LINKER.downcallHandle(
            LINKER.defaultLookup().find("openat").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            Linker.Option.captureCallState("errno"),
            Linker.Option.firstVariadicArg(3));
    private static final MethodHandle CLOSE = LINKER.downcallHandle(
            LINKER.defaultLookup().find("close").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private Syscalls() {}

    /** {@code openat(2)}: the descriptor, or minus errno. */
    static int openat(int dir, String name, int flags, int mode) {
        return openat(dir, name.getBytes(StandardCharsets.UTF_8), flags, mode);
    }

    /** {@code openat(2)} of a name given as its bytes: the descriptor, or minus errno. */
    static int openat(int dir, byte[] name, int flags, int mode) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            MemorySegment path = arena.allocate(name.length + 1L); // zeroed: the last byte ends the string
            MemorySegment.copy(name, 0, path, JAVA_BYTE, 0, name.length);
            int r = (int) OPENAT.invokeExact(state, dir, path, flags | O_CLOEXEC, mode);
            return r >= 0 ? r : -(int) ERRNO.get(state, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException("openat failed to run", t);
        }
    }

    /** {@code close(2)}; its result is not looked at (a descriptor is closed even when it reports an error). */
    static void closeFd(int f) {
        try {
            int ignored = (int) CLOSE.invokeExact(f);
        } catch (Throwable t) {
            throw new IllegalStateException("close failed to run", t);
        }
    }
}
