package dev.drover.agent;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.testing.LiveThreads;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code devices} over the real NVML binding, against the deviceplugin module's stand-in for libnvidia-ml.so.1
 * (deviceplugin/src/test/c/fake_nvml.c: a Tesla T4 and an A100 that reports no power draw), built here with gcc;
 * skipped where gcc is missing.
 */
@SuppressWarnings("restricted")
class DevicesCommandNvmlTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String T4 = "GPU-11111111-2222-3333-4444-555555555555";
    private static final String A100 = "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
    private static final Path SOURCE = Path.of("../deviceplugin/src/test/c/fake_nvml.c");
    private static final long XID_CRITICAL = 0x8L;
    private static final int NO_GPU_INSTANCE = 0xFFFFFFFF;

    @TempDir
    static Path lib;

    private static Path library;
    private static MethodHandle injectEvent;
    private static MethodHandle setInitResult;

    private Set<Long> threadsBefore;
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();

    @BeforeAll
    static void buildFakeNvml() throws Exception {
        assumeThat(Files.exists(SOURCE)).as("%s is there", SOURCE).isTrue();
        assumeThat(gcc("--version")).as("gcc is installed").isZero();
        library = lib.resolve("libnvidia-ml.so.1");
        assertThat(gcc("-shared", "-fPIC", "-O1", "-Wall", "-o", library.toString(), SOURCE.toString(), "-lpthread"))
                .as("gcc builds %s", SOURCE)
                .isZero();
        // the plugin's dlopen of the same path gets this copy: what is set here is what it sees
        SymbolLookup fake = SymbolLookup.libraryLookup(library, Arena.global());
        Linker linker = Linker.nativeLinker();
        injectEvent = linker.downcallHandle(
                fake.findOrThrow("fake_nvml_inject_event"),
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
        setInitResult = linker.downcallHandle(
                fake.findOrThrow("fake_nvml_set_init_result"), FunctionDescriptor.ofVoid(JAVA_INT));
    }

    private static int gcc(String... args) throws InterruptedException {
        String[] command = new String[args.length + 1];
        command[0] = "gcc";
        System.arraycopy(args, 0, command, 1, args.length);
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            if (p.exitValue() != 0) {
                System.err.println(output);
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        }
    }

    @BeforeEach
    void reset() throws Throwable {
        setInitResult.invokeExact(0);
        threadsBefore = LiveThreads.ids(LiveThreads.now());
    }

    /** The plugin's event thread (drover-nvml-events) and every call thread are joined before the command returns. */
    @AfterEach
    void noThreadLeft() {
        assertThat(LiveThreads.startedSince(threadsBefore, t -> false)).isEmpty();
    }

    private int run(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "devices";
        System.arraycopy(args, 0, all, 1, args.length);
        return Main.run(all, Map.of(), print(stdout), print(stderr));
    }

    private static PrintStream print(OutputStream to) {
        return new PrintStream(to, true, StandardCharsets.UTF_8);
    }

    private String out() {
        return stdout.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return stderr.toString(StandardCharsets.UTF_8);
    }

    private String nvidia() {
        return "nvidia:" + library;
    }

    @Test
    void jsonShowsWhatNvmlReportsOfEachGpu() throws Exception {
        assertThat(run("--device-plugin", nvidia(), "--stats", "-o", "json")).isZero();
        JsonNode plugin = JSON.readTree(out()).get("plugins").get(0);
        assertThat(plugin.get("name").asText()).isEqualTo("nvidia");
        assertThat(plugin.get("config").get("library").asText()).isEqualTo(library.toString());
        JsonNode groups = plugin.get("groups");
        assertThat(groups).hasSize(2);

        JsonNode t4 = groups.get(0);
        assertThat(t4.get("id").asText()).isEqualTo("nvidia/gpu/Tesla T4");
        JsonNode a = t4.get("attributes");
        assertThat(a.get("memory").get("value").asLong()).isEqualTo(15360);
        assertThat(a.get("memory").get("unit").asText()).isEqualTo("MiB");
        assertThat(a.get("power_limit").get("display").asText()).isEqualTo("70 W");
        assertThat(a.get("cores_clock").get("display").asText()).isEqualTo("1590 MHz");
        assertThat(a.get("memory_clock").get("display").asText()).isEqualTo("5001 MHz");
        assertThat(a.get("compute_capability").get("value").asText()).isEqualTo("7.5");
        assertThat(a.get("cuda_version").get("value").asText()).isEqualTo("12.4");
        assertThat(a.has("driver_version")).isTrue();
        JsonNode gpu0 = t4.get("instances").get(0);
        assertThat(gpu0.get("id").asText()).isEqualTo(T4);
        assertThat(gpu0.get("healthy").asBoolean()).isTrue();
        assertThat(gpu0.get("pciBusId").asText()).isEqualTo("00000000:00:1E.0");
        assertThat(gpu0.get("gpuIndex").asInt()).isZero();
        assertThat(gpu0.get("gpuUuid").asText()).isEqualTo(T4);
        JsonNode s = gpu0.get("stats");
        assertThat(s.get("gpuUtilPercent").asDouble()).isEqualTo(37.0);
        assertThat(s.get("memUtilPercent").asDouble()).isEqualTo(12.0);
        assertThat(s.get("memoryUsedMiB").asLong()).isEqualTo(2048);
        assertThat(s.get("memoryTotalMiB").asLong()).isEqualTo(15360);
        assertThat(s.get("temperatureC").asDouble()).isEqualTo(48.0);
        assertThat(s.get("powerW").asDouble()).as("NVML's milliwatts as W").isEqualTo(31.5);
        assertThat(s.get("eccErrorsCorrected").asLong()).isEqualTo(2);
        assertThat(s.get("smClockMHz").asLong()).isEqualTo(1590);
        assertThat(s.get("memoryClockMHz").asLong()).isEqualTo(5000);

        JsonNode gpu1 = groups.get(1).get("instances").get(0);
        assertThat(groups.get(1).get("model").asText()).isEqualTo("NVIDIA A100-SXM4-40GB");
        assertThat(gpu1.get("id").asText()).isEqualTo(A100);
        assertThat(gpu1.get("gpuIndex").asInt()).isEqualTo(1);
        assertThat(gpu1.get("stats").has("powerW"))
                .as("NOT_SUPPORTED: left out")
                .isFalse();
        assertThat(gpu1.get("stats").get("temperatureC").asDouble()).isEqualTo(31.0);
    }

    @Test
    void watchSeesAnXidFromTheEventThread() throws Throwable {
        CountDownLatch watching = new CountDownLatch(1);
        OutputStream tee = new OutputStream() {
            @Override
            public void write(int b) {
                stdout.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                stdout.write(b, off, len);
                if (out().contains("watching for ")) {
                    watching.countDown();
                }
            }
        };
        AtomicInteger exit = new AtomicInteger(-1);
        Thread command = Thread.ofPlatform()
                .name("devices-nvml-test")
                .start(() -> exit.set(Main.run(
                        new String[] {"devices", "--device-plugin", nvidia(), "--watch", "3s"},
                        Map.of(),
                        print(tee),
                        print(stderr))));
        assertThat(watching.await(60, TimeUnit.SECONDS)).isTrue();
        injectEvent.invokeExact(0, XID_CRITICAL, 79L, NO_GPU_INSTANCE);
        command.join(java.time.Duration.ofSeconds(60));
        assertThat(command.isAlive()).isFalse();

        assertThat(exit.get()).as(err()).isZero();
        assertThat(out())
                .containsPattern(T4 + " +healthy +00000000:00:1E\\.0 +0\\n")
                .containsPattern("Z  nvidia  health  " + T4 + "  unhealthy: .*XID 79.* \\(was healthy\\)\\n")
                .endsWith("watch ended after 3s: 1 change(s)\n");
    }

    @Test
    void aDriverThatIsNotLoadedExitsOneSayingWhy() throws Throwable {
        setInitResult.invokeExact(9); // NVML_ERROR_DRIVER_NOT_LOADED
        assertThat(run("--device-plugin", nvidia())).isEqualTo(1);
        assertThat(err())
                .startsWith(
                        "drover-agent devices: the nvidia plugin sees no devices: no NVIDIA GPUs: nvmlInit_v2 failed: ")
                .contains("Driver Not Loaded")
                .hasLineCount(1);
        assertThat(out()).contains("plugin nvidia 1").contains("  no devices: no NVIDIA GPUs: nvmlInit_v2 failed");
    }

    @Test
    void aLibraryThatIsNotThereExitsOneNamingIt() {
        Path missing = lib.resolve("nowhere/libnvidia-ml.so.1");
        assertThat(run("--device-plugin", "nvidia:" + missing)).isEqualTo(1);
        assertThat(err())
                .startsWith("drover-agent devices: the nvidia plugin sees no devices: no NVIDIA GPUs: dlopen(" + missing
                        + ") failed: NVIDIA driver library not found")
                .hasLineCount(1);
    }
}
