package dev.drover.deviceplugin.nvidia;

import static dev.drover.deviceplugin.nvidia.FakeNvmlLibrary.A100;
import static dev.drover.deviceplugin.nvidia.FakeNvmlLibrary.MIG_1;
import static dev.drover.deviceplugin.nvidia.FakeNvmlLibrary.MIG_2;
import static dev.drover.deviceplugin.nvidia.FakeNvmlLibrary.T4;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.DevicePlugin;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.FingerprintValidator;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.deviceplugin.ThreadLeaks;
import dev.drover.deviceplugin.Unit;
import dev.drover.deviceplugin.fake.ManualPluginClock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The nvidia plugin against a fake libnvidia-ml.so built from C: the FFM binding runs for real. */
class NvidiaDevicePluginTest {

    private static FakeNvmlLibrary nvml;

    private final ManualPluginClock clock = new ManualPluginClock(Instant.parse("2026-01-01T00:00:00Z"));
    private ThreadLeaks leaks;
    private ExecutorService calls;
    private NvidiaDevicePlugin plugin;

    @BeforeAll
    static void buildLibrary() throws Exception {
        assumeThat(FakeNvmlLibrary.gccAvailable())
                .as("gcc is needed to build the fake libnvidia-ml.so from src/test/c; skipping NVML binding tests")
                .isTrue();
        nvml = FakeNvmlLibrary.get();
    }

    @BeforeEach
    void start() throws Throwable {
        nvml.reset();
        leaks = ThreadLeaks.snapshot();
        calls = Executors.newVirtualThreadPerTaskExecutor();
    }

    @AfterEach
    void stop() throws Throwable {
        if (plugin != null) plugin.close();
        calls.close();
        assertThat(nvml.initCount()).as("nvmlInit without nvmlShutdown").isZero();
        assertThat(nvml.liveEventSets()).as("event sets not freed").isZero();
        leaks.assertNoNewThreads();
    }

    private NvidiaDevicePlugin start(Map<String, Object> extra) throws Exception {
        Map<String, Object> config = new HashMap<>(
                Map.of("library", nvml.path.toString(), "quietPeriod", "1m", "eventPollInterval", "20ms"));
        config.putAll(extra);
        plugin = new NvidiaDevicePlugin(clock);
        plugin.configure(config);
        return plugin;
    }

    @Test
    void listsEachGpuWithItsUuidModelAndAttributes() throws Exception {
        Fingerprint fp = start(Map.of()).fingerprint();
        assertThat(FingerprintValidator.problems(fp)).isEmpty();
        assertThat(fp.unavailableReason()).isEmpty();
        assertThat(fp.groups())
                .extracting(DeviceGroup::id)
                .containsExactly("nvidia/gpu/Tesla T4", "nvidia/gpu/NVIDIA A100-SXM4-40GB");
        DeviceGroup t4 = fp.groups().getFirst();
        assertThat(t4.instances())
                .containsExactly(new DeviceInstance(
                        T4,
                        true,
                        "",
                        java.util.Optional.of("00000000:00:1E.0"),
                        java.util.Optional.of(DeviceInstance.GpuSlot.whole(0, T4))));
        assertThat(t4.attributes())
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        "memory", AttributeValue.integer(15360, Unit.MIB),
                        "power_limit", AttributeValue.integer(70, Unit.WATT),
                        "cores_clock", AttributeValue.integer(1590, Unit.MHZ),
                        "memory_clock", AttributeValue.integer(5001, Unit.MHZ),
                        "compute_capability", AttributeValue.text("7.5"),
                        "driver_version", AttributeValue.text("550.54.15"),
                        "cuda_version", AttributeValue.text("12.4")));
        assertThat(fp.groups().get(1).instances())
                .extracting(DeviceInstance::id)
                .containsExactly(A100);
    }

    /**
     * Memory used as nvidia-smi shows it: what the driver reserves for itself is not used by anyone (an idle H200
     * showed 615 MiB used through the first version of the call, 0 in nvidia-smi); a library before the second
     * version, or one that refuses its version word, gives the first version's figure.
     */
    @Test
    void memoryUsedLeavesOutWhatTheDriverReservesWhereTheLibraryTells() throws Throwable {
        NvidiaDevicePlugin plugin = start(Map.of());
        assertThat(plugin.stats().getFirst().memoryUsedMiB()).hasValue(2048);
        nvml.memoryV2(0);
        assertThat(plugin.stats().getFirst().memoryUsedMiB())
                .as("no _v2 in the library")
                .hasValue(2048 + 434);
        nvml.memoryV2(2);
        assertThat(plugin.stats().getFirst().memoryUsedMiB())
                .as("_v2 refuses the version")
                .hasValue(2048 + 434);
        nvml.memoryV2(1);
        assertThat(plugin.stats().getFirst().memoryUsedMiB()).hasValue(2048);
    }

    @Test
    void statsCarryMeasurementsAndUnsupportedValuesAreAbsent() throws Exception {
        List<InstanceStats> stats = start(Map.of()).stats();
        assertThat(stats).extracting(InstanceStats::id).containsExactly(T4, A100);
        InstanceStats t4 = stats.getFirst();
        assertThat(t4.timestamp()).isEqualTo(clock.now());
        assertThat(t4.gpuUtilPercent()).hasValue(37);
        assertThat(t4.memUtilPercent()).hasValue(12);
        assertThat(t4.memoryUsedMiB()).hasValue(2048);
        assertThat(t4.memoryTotalMiB()).hasValue(15360);
        assertThat(t4.temperatureC()).hasValue(48);
        assertThat(t4.powerW()).hasValue(31.5);
        assertThat(t4.eccErrorsCorrected()).hasValue(2);
        assertThat(t4.eccErrorsUncorrected()).hasValue(0);
        assertThat(t4.smClockMHz()).hasValue(1590);
        assertThat(t4.memoryClockMHz()).hasValue(5000);
        InstanceStats a100 = stats.get(1);
        assertThat(a100.powerW()).as("NOT_SUPPORTED is absent, not zero").isEmpty();
        assertThat(a100.gpuUtilPercent()).hasValue(0);
    }

    @Test
    void criticalXidMakesTheGpuUnhealthyUntilTheQuietPeriodPasses() throws Throwable {
        start(Map.of());
        Fingerprint healthy = plugin.fingerprint();
        Future<Fingerprint> change = calls.submit(() -> plugin.awaitChange(healthy, Duration.ofHours(1)));
        nvml.xid(0, 79);
        Fingerprint sick = change.get(10, TimeUnit.SECONDS);
        DeviceInstance t4 = instance(sick, T4);
        assertThat(t4.healthy()).isFalse();
        assertThat(t4.healthDescription())
                .startsWith("XID 79 at 2026-01-01T00:00:00Z")
                .contains("after PT1M");
        assertThat(instance(sick, A100).healthy()).isTrue();

        Future<Fingerprint> recovery = calls.submit(() -> plugin.awaitChange(sick, Duration.ofHours(1)));
        await().until(() -> clock.waiters() > 0);
        clock.advance(Duration.ofSeconds(59));
        assertThat(instance(plugin.fingerprint(), T4).healthy()).isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(instance(recovery.get(10, TimeUnit.SECONDS), T4))
                .isEqualTo(new DeviceInstance(
                        T4,
                        true,
                        "",
                        java.util.Optional.of("00000000:00:1E.0"),
                        java.util.Optional.of(DeviceInstance.GpuSlot.whole(0, T4))));
    }

    @Test
    void applicationXidsLeaveTheGpuHealthy() throws Throwable {
        start(Map.of());
        Fingerprint before = plugin.fingerprint();
        for (long xid : new long[] {13, 31, 43, 45, 68, 109}) {
            nvml.xid(0, xid);
        }
        nvml.xid(1, 48); // a critical one after them, on the other GPU: once it shows, the others were handled
        await().until(() -> !instance(plugin.fingerprint(), A100).healthy());
        assertThat(instance(plugin.fingerprint(), T4)).isEqualTo(instance(before, T4));
    }

    @Test
    void applicationXidsCanBeConfigured() throws Throwable {
        start(Map.of("applicationXids", List.of(79)));
        nvml.xid(0, 79);
        nvml.xid(1, 13);
        await().until(() -> !instance(plugin.fingerprint(), A100).healthy());
        assertThat(instance(plugin.fingerprint(), T4).healthy()).isTrue();
    }

    @Test
    void doubleBitEccErrorMakesTheGpuUnhealthy() throws Throwable {
        start(Map.of());
        nvml.doubleBitEcc(1);
        await().until(() -> !instance(plugin.fingerprint(), A100).healthy());
        assertThat(instance(plugin.fingerprint(), A100).healthDescription()).startsWith("double-bit ECC error");
    }

    @Test
    void migDevicesAreDevicesOfTheirOwnInsteadOfTheirGpu() throws Throwable {
        nvml.mig(true);
        Fingerprint fp = start(Map.of()).fingerprint();
        assertThat(fp.groups())
                .extracting(DeviceGroup::id)
                .containsExactly("nvidia/gpu/Tesla T4", "nvidia/gpu/NVIDIA A100-SXM4-40GB MIG 3g.20gb");
        DeviceGroup mig = fp.groups().get(1);
        assertThat(mig.instances()).extracting(DeviceInstance::id).containsExactly(MIG_1, MIG_2);
        assertThat(mig.instances())
                .extracting(i -> i.gpu().orElseThrow())
                .as("on the A100 (NVML index 1), GPU instances 1 and 2")
                .containsExactly(
                        new DeviceInstance.GpuSlot(1, A100, java.util.OptionalInt.of(1)),
                        new DeviceInstance.GpuSlot(1, A100, java.util.OptionalInt.of(2)));
        assertThat(mig.attributes())
                .containsEntry("memory", AttributeValue.integer(19968, Unit.MIB))
                .doesNotContainKey("power_limit");
        assertThat(fp.instances()).extracting(DeviceInstance::id).doesNotContain(A100);
        assertThat(plugin.reserve(List.of(MIG_2)).env())
                .isEqualTo(Map.of("NVIDIA_VISIBLE_DEVICES", MIG_2, "CUDA_VISIBLE_DEVICES", MIG_2));
        assertThat(plugin.reserve(List.of(MIG_2)).cdiDevices()).containsExactly("nvidia.com/gpu=" + MIG_2);
        assertThat(plugin.stats()).extracting(InstanceStats::id).containsExactly(T4, MIG_1, MIG_2);
        assertThat(plugin.stats().get(1).memoryTotalMiB()).hasValue(19968);
        assertThat(plugin.stats().get(1).temperatureC()).isEmpty();
    }

    @Test
    void xidOnOneGpuInstanceMarksOnlyThatMigDevice() throws Throwable {
        nvml.mig(true);
        start(Map.of());
        nvml.xidOnGpuInstance(1, 94, 2);
        await().until(() -> !instance(plugin.fingerprint(), MIG_2).healthy());
        assertThat(instance(plugin.fingerprint(), MIG_1).healthy()).isTrue();
        nvml.xid(1, 79); // not attributable to one instance: the whole GPU
        await().until(() -> !instance(plugin.fingerprint(), MIG_1).healthy());
    }

    @Test
    void reserveNamesTheGpusInBothVisibleDevicesVariablesInTheOrderGiven() throws Exception {
        start(Map.of());
        assertThat(plugin.reserve(List.of(A100, T4)).env())
                .isEqualTo(Map.of("NVIDIA_VISIBLE_DEVICES", A100 + "," + T4, "CUDA_VISIBLE_DEVICES", A100 + "," + T4));
        assertThat(plugin.reserve(List.of(T4)).env())
                .isEqualTo(Map.of("NVIDIA_VISIBLE_DEVICES", T4, "CUDA_VISIBLE_DEVICES", T4));
        assertThat(plugin.reserve(List.of(A100, T4)).cdiDevices())
                .as("the names nvidia-ctk cdi generate gives them by UUID")
                .containsExactly("nvidia.com/gpu=" + A100, "nvidia.com/gpu=" + T4);
        assertThatThrownBy(() -> plugin.reserve(List.of("GPU-gone")))
                .hasMessageContaining("cannot reserve [GPU-gone]: no such GPU managed on this host");
    }

    @Test
    void onlyTheGpusNamedByIndexAreFingerprintedStatedAndReserved() throws Exception {
        start(Map.of("devices", List.of(1)));
        Fingerprint fp = plugin.fingerprint();
        assertThat(fp.instances()).extracting(DeviceInstance::id).containsExactly(A100);
        assertThat(plugin.stats()).extracting(InstanceStats::id).containsExactly(A100);
        assertThatThrownBy(() -> plugin.reserve(List.of(T4)))
                .hasMessageContaining("cannot reserve [" + T4 + "]: no such GPU managed on this host");
        assertThat(plugin.reserve(List.of(A100)).env()).containsEntry("CUDA_VISIBLE_DEVICES", A100);
    }

    @Test
    void excludedGpusAreLeftForOthersByUuidOrIndex() throws Exception {
        start(Map.of("excludeDevices", List.of(T4)));
        assertThat(plugin.fingerprint().instances())
                .extracting(DeviceInstance::id)
                .containsExactly(A100);
        plugin.close();
        plugin = null;
        start(Map.of("devices", List.of(0, A100), "excludeDevices", List.of("1")));
        assertThat(plugin.fingerprint().instances())
                .extracting(DeviceInstance::id)
                .containsExactly(T4);
    }

    @Test
    void aGpuNamedInMigModeBringsItsMigDevicesAndOneMigDeviceCanBeNamedAlone() throws Throwable {
        nvml.mig(true);
        start(Map.of("devices", List.of(A100)));
        assertThat(plugin.fingerprint().instances())
                .extracting(DeviceInstance::id)
                .containsExactly(MIG_1, MIG_2);
        plugin.close();
        plugin = null;
        start(Map.of("devices", List.of(MIG_2)));
        assertThat(plugin.fingerprint().instances())
                .extracting(DeviceInstance::id)
                .containsExactly(MIG_2);
    }

    @Test
    void anEntryNamingNoGpuIsIgnoredAndABadOneRefused() throws Exception {
        start(Map.of("devices", List.of(0, "GPU-00000000-0000-0000-0000-000000000000", 7)));
        assertThat(plugin.fingerprint().instances())
                .extracting(DeviceInstance::id)
                .containsExactly(T4);
        plugin.close();
        plugin = null;
        assertThatThrownBy(() -> start(Map.of("devices", List.of("all"))))
                .isInstanceOf(dev.drover.deviceplugin.DevicePluginException.class)
                .hasMessageContaining("config.devices[0]: \"all\" is neither a GPU index");
        assertThat(plugin.unavailableReason()).isEmpty(); // refused before loading NVML
        plugin = null;
    }

    @Test
    void gpuThatFellOffTheBusStaysInItsGroupAsUnhealthy() throws Throwable {
        start(Map.of());
        plugin.fingerprint();
        nvml.lost(0, true);
        Fingerprint fp = plugin.fingerprint();
        assertThat(fp.groups().getFirst().id()).isEqualTo("nvidia/gpu/Tesla T4");
        DeviceInstance t4 = instance(fp, T4);
        assertThat(t4.healthy()).isFalse();
        assertThat(t4.healthDescription()).contains("GPU is lost");
        assertThat(plugin.stats()).extracting(InstanceStats::id).containsExactly(A100);
    }

    @Test
    void missingLibraryMeansNoDevicesAndSaysWhy() throws Exception {
        start(Map.of("library", "/nonexistent/libnvidia-ml.so.1"));
        Fingerprint fp = plugin.fingerprint();
        assertThat(fp.groups()).isEmpty();
        assertThat(fp.unavailableReason())
                .get()
                .asString()
                .contains("NVIDIA driver library not found")
                .contains("/nonexistent/libnvidia-ml.so.1");
        assertThat(plugin.unavailableReason()).isEqualTo(fp.unavailableReason());
        assertThat(plugin.stats()).isEmpty();
        assertThat(plugin.watchingEvents()).isFalse();
        assertThatThrownBy(() -> plugin.reserve(List.of(T4))).hasMessageContaining("no such GPU");
    }

    @Test
    void driverNotLoadedMeansNoDevicesAndSaysWhy() throws Throwable {
        nvml.initResult(NvmlException.ERROR_DRIVER_NOT_LOADED);
        Fingerprint fp = start(Map.of()).fingerprint();
        assertThat(fp.groups()).isEmpty();
        assertThat(fp.unavailableReason()).get().asString().contains("nvmlInit_v2 failed: Driver Not Loaded");
    }

    @Test
    void closeJoinsTheEventThreadAndShutsNvmlDown() throws Throwable {
        start(Map.of());
        assertThat(plugin.watchingEvents()).isTrue();
        assertThat(nvml.initCount()).isEqualTo(1);
        assertThat(nvml.liveEventSets()).isEqualTo(1);
        plugin.close();
        assertThat(plugin.watchingEvents()).isFalse();
        assertThat(nvml.initCount()).isZero();
        assertThat(nvml.liveEventSets()).isZero();
        assertThatThrownBy(plugin::fingerprint).hasMessageContaining("closed");
    }

    @Test
    void closeWakesAWaiter() throws Exception {
        start(Map.of());
        Fingerprint fp = plugin.fingerprint();
        Future<Fingerprint> waiting = calls.submit(() -> plugin.awaitChange(fp, Duration.ofHours(1)));
        await().until(() -> clock.waiters() > 0);
        plugin.close();
        assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
                .hasRootCauseMessage("device plugin nvidia is closed");
    }

    @Test
    void foundByNameWithTheLibraryAsArgument() throws Exception {
        try (DevicePlugin p =
                DevicePlugins.discover().select("nvidia:" + nvml.path).start()) {
            assertThat(p.info().name()).isEqualTo("nvidia");
            assertThat(p.fingerprint().instances())
                    .extracting(DeviceInstance::id)
                    .containsExactly(T4, A100);
        }
    }

    @Test
    void badConfigurationNamesTheKey() {
        plugin = new NvidiaDevicePlugin(clock);
        assertThatThrownBy(() -> plugin.configure(Map.of("quietPeriod", "0s")))
                .hasMessage("device plugin nvidia: config.quietPeriod: must be longer than 0 (e.g. 5m)");
        NvidiaDevicePlugin other = new NvidiaDevicePlugin(clock);
        assertThatThrownBy(() -> other.configure(Map.of("libary", "x")))
                .hasMessageContaining("config.libary: unknown key (known: library,");
    }

    private static DeviceInstance instance(Fingerprint fp, String id) {
        return fp.instances().stream()
                .filter(i -> i.id().equals(id))
                .findFirst()
                .orElseThrow();
    }
}
