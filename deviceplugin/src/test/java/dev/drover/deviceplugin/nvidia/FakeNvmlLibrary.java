package dev.drover.deviceplugin.nvidia;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;

/**
 * Builds src/test/c/fake_nvml.c into target/fake-nvml/libnvidia-ml.so.1 with gcc and exposes its control
 * functions. The library is loaded once for the JVM; each plugin's own dlopen gets the same copy, so what a
 * test sets here is what the plugin sees.
 */
@SuppressWarnings("restricted")
final class FakeNvmlLibrary {

    static final String T4 = "GPU-11111111-2222-3333-4444-555555555555";
    static final String A100 = "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
    static final String MIG_1 = "MIG-0aaaaaaa-1111-2222-3333-444444444444";
    static final String MIG_2 = "MIG-0bbbbbbb-1111-2222-3333-444444444444";

    private static FakeNvmlLibrary instance;

    final Path path;
    private final MethodHandle setInitResult;
    private final MethodHandle setMig;
    private final MethodHandle setLost;
    private final MethodHandle setMemoryV2;
    private final MethodHandle initCount;
    private final MethodHandle liveEventSets;
    private final MethodHandle injectEvent;

    private FakeNvmlLibrary(Path path) {
        this.path = path;
        SymbolLookup lib = SymbolLookup.libraryLookup(path, Arena.global());
        Linker linker = Linker.nativeLinker();
        setInitResult = linker.downcallHandle(
                lib.findOrThrow("fake_nvml_set_init_result"), FunctionDescriptor.ofVoid(JAVA_INT));
        setMig = linker.downcallHandle(lib.findOrThrow("fake_nvml_set_mig"), FunctionDescriptor.ofVoid(JAVA_INT));
        setMemoryV2 =
                linker.downcallHandle(lib.findOrThrow("fake_nvml_set_memory_v2"), FunctionDescriptor.ofVoid(JAVA_INT));
        setLost = linker.downcallHandle(
                lib.findOrThrow("fake_nvml_set_lost"), FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT));
        initCount = linker.downcallHandle(lib.findOrThrow("fake_nvml_init_count"), FunctionDescriptor.of(JAVA_INT));
        liveEventSets =
                linker.downcallHandle(lib.findOrThrow("fake_nvml_live_event_sets"), FunctionDescriptor.of(JAVA_INT));
        injectEvent = linker.downcallHandle(
                lib.findOrThrow("fake_nvml_inject_event"),
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    }

    /** The built library, or why it could not be built (no gcc): a reason to skip, not a failure. */
    static synchronized FakeNvmlLibrary get() throws IOException, InterruptedException {
        if (instance == null) {
            instance = new FakeNvmlLibrary(build());
        }
        return instance;
    }

    static boolean gccAvailable() {
        try {
            Process p = new ProcessBuilder("gcc", "--version")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static Path build() throws IOException, InterruptedException {
        Path source = Path.of("src/test/c/fake_nvml.c").toAbsolutePath();
        Path dir = Files.createDirectories(Path.of("target/fake-nvml").toAbsolutePath());
        Path lib = dir.resolve("libnvidia-ml.so.1");
        Path tmp = dir.resolve("libnvidia-ml.so.1.tmp");
        Process gcc = new ProcessBuilder(
                        "gcc",
                        "-shared",
                        "-fPIC",
                        "-O1",
                        "-Wall",
                        "-Werror",
                        "-o",
                        tmp.toString(),
                        source.toString(),
                        "-lpthread")
                .redirectErrorStream(true)
                .start();
        String output = new String(gcc.getInputStream().readAllBytes());
        if (!gcc.waitFor(60, TimeUnit.SECONDS) || gcc.exitValue() != 0) {
            throw new IllegalStateException("gcc could not build " + source + ":\n" + output);
        }
        Files.move(tmp, lib, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return lib;
    }

    void reset() throws Throwable {
        setInitResult.invokeExact(0);
        setMig.invokeExact(0);
        setMemoryV2.invokeExact(1);
        setLost.invokeExact(0, 0);
        setLost.invokeExact(1, 0);
    }

    void initResult(int rc) throws Throwable {
        setInitResult.invokeExact(rc);
    }

    void mig(boolean enabled) throws Throwable {
        setMig.invokeExact(enabled ? 1 : 0);
    }

    /** How the library answers nvmlDeviceGetMemoryInfo_v2: 1 as R510 and later, 0 lacking it, 2 another version. */
    void memoryV2(int mode) throws Throwable {
        setMemoryV2.invokeExact(mode);
    }

    void lost(int gpu, boolean lost) throws Throwable {
        setLost.invokeExact(gpu, lost ? 1 : 0);
    }

    int initCount() throws Throwable {
        return (int) initCount.invokeExact();
    }

    int liveEventSets() throws Throwable {
        return (int) liveEventSets.invokeExact();
    }

    void xid(int gpu, long xid) throws Throwable {
        injectEvent.invokeExact(gpu, NvmlLayouts.EVENT_XID_CRITICAL, xid, NvmlLayouts.NO_GPU_INSTANCE);
    }

    void xidOnGpuInstance(int gpu, long xid, int gpuInstance) throws Throwable {
        injectEvent.invokeExact(gpu, NvmlLayouts.EVENT_XID_CRITICAL, xid, gpuInstance);
    }

    void doubleBitEcc(int gpu) throws Throwable {
        injectEvent.invokeExact(gpu, NvmlLayouts.EVENT_DOUBLE_BIT_ECC, 0L, NvmlLayouts.NO_GPU_INSTANCE);
    }
}
