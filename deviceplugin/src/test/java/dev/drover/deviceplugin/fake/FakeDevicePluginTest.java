package dev.drover.deviceplugin.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.DevicePlugin;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.FingerprintValidator;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.deviceplugin.InvalidFingerprintException;
import dev.drover.deviceplugin.ThreadLeaks;
import dev.drover.deviceplugin.Unit;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FakeDevicePluginTest {

    private static final String GPUS = """
            groups:
              - vendor: nvidia
                type: gpu
                model: Tesla T4
                attributes: {memory: 15360 MiB}
                instances:
                  - id: GPU-a
                    pciBusId: "00000000:00:1E.0"
                    stats: {gpuUtilPercent: 37, memoryUsedMiB: 2048, memoryTotalMiB: 15360, powerW: 31.5}
                  - id: GPU-b
                    unhealthy:
                      - {from: 1m, until: 2m, reason: "XID 79"}
              - vendor: acme
                type: fpga
                model: F1
                instances:
                  - id: fpga-0
            """;

    private final ManualPluginClock clock = new ManualPluginClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final FakePluginFactory factory = new FakePluginFactory(clock);
    private ExecutorService calls;
    private ThreadLeaks leaks;

    @BeforeEach
    void start() {
        leaks = ThreadLeaks.snapshot();
        calls = Executors.newVirtualThreadPerTaskExecutor();
    }

    @AfterEach
    void stop() {
        calls.close();
        leaks.assertNoNewThreads();
    }

    private DevicePlugin plugin(String faults) throws Exception {
        DevicePlugin p = factory.create();
        ((FakeDevicePlugin) p).configure(FakeDeviceFileParser.parse(GPUS + faults, "gpus.yaml"));
        return p;
    }

    @Test
    void fingerprintListsTheFilesDevices() throws Exception {
        try (DevicePlugin p = plugin("")) {
            Fingerprint fp = p.fingerprint();
            assertThat(fp.groups()).extracting(g -> g.id()).containsExactly("nvidia/gpu/Tesla T4", "acme/fpga/F1");
            assertThat(fp.groups().getFirst().attributes())
                    .containsEntry("memory", AttributeValue.integer(15360, Unit.MIB));
            assertThat(fp.instances()).extracting(DeviceInstance::id).containsExactly("GPU-a", "GPU-b", "fpga-0");
            assertThat(fp.instances().getFirst().pciBusId()).hasValue("00000000:00:1E.0");
            assertThat(fp.instances()).allMatch(DeviceInstance::healthy);
            assertThat(p.info().name()).isEqualTo("fake");
        }
    }

    @Test
    void configuredFromAFilePath() throws Exception {
        try (DevicePlugin p = factory.create()) {
            p.configure(factory.configFromArgument("../examples/devices/fake-gpus.yaml"));
            assertThat(p.fingerprint().instances()).hasSize(2);
        }
    }

    @Test
    void statsCarryTheFilesValuesAndLeaveTheRestAbsent() throws Exception {
        try (DevicePlugin p = plugin("")) {
            clock.advance(Duration.ofSeconds(5));
            List<InstanceStats> stats = p.stats();
            assertThat(stats).hasSize(1);
            InstanceStats a = stats.getFirst();
            assertThat(a.id()).isEqualTo("GPU-a");
            assertThat(a.timestamp()).isEqualTo(clock.now());
            assertThat(a.gpuUtilPercent()).hasValue(37.0);
            assertThat(a.memoryUsedMiB()).hasValue(2048);
            assertThat(a.powerW()).hasValue(31.5);
            assertThat(a.temperatureC()).isEmpty();
            assertThat(a.eccErrorsUncorrected()).isEmpty();
        }
    }

    @Test
    void reservingNvidiaInstancesSetsVisibleDevices() throws Exception {
        try (DevicePlugin p = plugin("")) {
            assertThat(p.reserve(List.of("GPU-b", "GPU-a")).env())
                    .isEqualTo(Map.of("NVIDIA_VISIBLE_DEVICES", "GPU-b,GPU-a", "CUDA_VISIBLE_DEVICES", "GPU-b,GPU-a"));
            assertThat(p.reserve(List.of("fpga-0")).env()).isEmpty();
            assertThatThrownBy(() -> p.reserve(List.of("GPU-a", "GPU-z")))
                    .hasMessageContaining("unknown or unmanaged instance(s) [GPU-z]");
        }
    }

    @Test
    void withACdiSpecDirItDescribesItsDevicesAndReservationsNameThem(@TempDir Path cdi) throws Exception {
        Path gpus = Files.writeString(cdi.resolve("gpus.yaml"), GPUS);
        try (DevicePlugin p = factory.create()) {
            p.configure(Map.of(
                    "file", gpus.toString(), "cdiSpecDir", cdi.resolve("specs").toString()));
            assertThat(p.reserve(List.of("GPU-b", "fpga-0", "GPU-b")).cdiDevices())
                    .containsExactly("fake.drover.dev/device=GPU-b", "fake.drover.dev/device=fpga-0");
            JsonNode spec = new ObjectMapper()
                    .readTree(cdi.resolve("specs/drover-fake.json").toFile());
            assertThat(spec.path("kind").asText()).isEqualTo("fake.drover.dev/device");
            assertThat(spec.path("containerEdits").path("env").toString()).isEqualTo("[\"DROVER_FAKE_CDI=1\"]");
            JsonNode b = spec.path("devices").get(1);
            assertThat(b.path("name").asText()).isEqualTo("GPU-b");
            assertThat(b.path("containerEdits").path("env").get(0).asText()).isEqualTo("FAKE_GPU_1=GPU-b");
            JsonNode node = b.path("containerEdits").path("deviceNodes").get(0);
            assertThat(node.path("path").asText()).isEqualTo("/dev/fake-gpu1");
            assertThat(node.path("hostPath").asText()).isEqualTo("/dev/null");
            assertThat(spec.path("devices")
                            .get(2)
                            .path("containerEdits")
                            .path("deviceNodes")
                            .get(0)
                            .path("path")
                            .asText())
                    .isEqualTo("/dev/fake-fpga0");
        }
        try (DevicePlugin p = plugin("")) {
            assertThat(p.reserve(List.of("GPU-a")).cdiDevices())
                    .as("without a spec, no CDI names: a container would be refused devices nothing describes")
                    .isEmpty();
        }
    }

    @Test
    void unmanagedGpusAreNeitherFingerprintedNorStatedNorReserved() throws Exception {
        try (DevicePlugin p = factory.create()) {
            Map<String, Object> config =
                    new java.util.HashMap<>(factory.configFromArgument("../examples/devices/fake-gpus.yaml"));
            config.put("excludeDevices", List.of(0)); // the file's first nvidia instance
            p.configure(config);
            List<String> ids =
                    p.fingerprint().instances().stream().map(DeviceInstance::id).toList();
            assertThat(ids).containsExactly("GPU-5d7e9a0b-6c1f-4e2a-8b3d-9c0e1f2a3b4c");
            assertThat(p.stats()).extracting(InstanceStats::id).containsExactlyElementsOf(ids);
            assertThatThrownBy(() -> p.reserve(List.of("GPU-8a3c5e1f-2b4d-4c6e-9f70-1a2b3c4d5e6f")))
                    .hasMessageContaining("unknown or unmanaged instance(s)");
        }
    }

    @Test
    void theGpuSelectionLeavesOtherVendorsAlone() throws Exception {
        try (DevicePlugin p = factory.create()) {
            ((FakeDevicePlugin) p)
                    .configure(
                            FakeDeviceFileParser.parse(GPUS, "gpus.yaml"),
                            new dev.drover.deviceplugin.nvidia.GpuSelection(
                                    java.util.Optional.of(java.util.Set.of("GPU-b")), java.util.Set.of()));
            assertThat(p.fingerprint().instances())
                    .extracting(DeviceInstance::id)
                    .containsExactly("GPU-b", "fpga-0");
            assertThat(p.reserve(List.of("GPU-b")).env()).containsEntry("CUDA_VISIBLE_DEVICES", "GPU-b");
        }
    }

    @Test
    void aBadGpuSelectionIsAConfigurationError() {
        Map<String, Object> config = Map.of("file", "gpus.yaml", "devices", List.of("first"));
        assertThatThrownBy(() -> factory.checkConfig(config))
                .isInstanceOf(DevicePluginException.class)
                .hasMessageContaining("config.devices[0]: \"first\" is neither a GPU index");
        assertThatThrownBy(() -> factory.checkConfig(Map.of("file", "gpus.yaml", "device", List.of(0))))
                .hasMessageContaining("config.device: unknown key");
    }

    @Test
    void healthFlipsAtTheScriptedTimes() throws Exception {
        try (DevicePlugin p = plugin("")) {
            Fingerprint healthy = p.fingerprint();
            Future<Fingerprint> change = calls.submit(() -> p.awaitChange(healthy, Duration.ofHours(1)));
            await().until(() -> clock.waiters() > 0);
            clock.advance(Duration.ofMinutes(1));
            Fingerprint sick = change.get(5, TimeUnit.SECONDS);
            assertThat(instance(sick, "GPU-b"))
                    .isEqualTo(new DeviceInstance("GPU-b", false, "XID 79", java.util.Optional.empty()));
            assertThat(instance(sick, "GPU-a").healthy()).isTrue();

            Future<Fingerprint> recovery = calls.submit(() -> p.awaitChange(sick, Duration.ofHours(1)));
            await().until(() -> clock.waiters() > 0);
            clock.advance(Duration.ofSeconds(59));
            assertThat(recovery).isNotDone();
            clock.advance(Duration.ofSeconds(1));
            assertThat(instance(recovery.get(5, TimeUnit.SECONDS), "GPU-b").healthy())
                    .isTrue();
        }
    }

    @Test
    void awaitChangeReturnsTheSameFingerprintAtTheTimeout() throws Exception {
        try (DevicePlugin p = plugin("")) {
            Fingerprint fp = p.fingerprint();
            Future<Fingerprint> same = calls.submit(() -> p.awaitChange(fp, Duration.ofSeconds(30)));
            await().until(() -> clock.waiters() > 0);
            clock.advance(Duration.ofSeconds(30));
            assertThat(same.get(5, TimeUnit.SECONDS)).isEqualTo(fp);
        }
    }

    @Test
    void crashAfterCallsKillsThePluginUntilItIsRestarted() throws Exception {
        String crash = "faults:\n  - {fault: crash, afterCalls: 2, message: segfault}\n";
        try (DevicePlugin p = plugin(crash)) {
            p.fingerprint();
            p.fingerprint();
            assertThatThrownBy(p::fingerprint).hasMessage("device plugin fake crashed: segfault");
            assertThatThrownBy(p::stats).hasMessageContaining("crashed earlier: segfault");
        }
        try (DevicePlugin restarted = plugin(crash)) {
            assertThat(restarted.fingerprint().instances()).hasSize(3);
        }
    }

    @Test
    void crashWindowOutlastsRestartsUntilItCloses() throws Exception {
        String crash = "faults:\n  - {fault: crash, from: 10s, until: 20s}\n";
        clock.advance(Duration.ofSeconds(10));
        try (DevicePlugin p = plugin(crash)) {
            assertThatThrownBy(p::fingerprint).isInstanceOf(DevicePluginException.class);
        }
        try (DevicePlugin p = plugin(crash)) {
            assertThatThrownBy(p::fingerprint).isInstanceOf(DevicePluginException.class);
        }
        clock.advance(Duration.ofSeconds(10));
        try (DevicePlugin p = plugin(crash)) {
            assertThat(p.fingerprint().instances()).hasSize(3);
        }
    }

    @Test
    void errorFaultFailsOnlyTheScriptedCall() throws Exception {
        try (DevicePlugin p = plugin("faults:\n  - {fault: error, call: stats, message: NVML busy}\n")) {
            assertThatThrownBy(p::stats).hasMessage("device plugin fake: NVML busy");
            assertThat(p.fingerprint().instances()).hasSize(3);
            assertThatThrownBy(p::stats).hasMessage("device plugin fake: NVML busy");
        }
    }

    @Test
    void hangLastsItsDurationOnTheClock() throws Exception {
        try (DevicePlugin p = plugin("faults:\n  - {fault: hang, call: stats, duration: 30s}\n")) {
            Future<List<InstanceStats>> stats = calls.submit(p::stats);
            await().until(() -> clock.waiters() > 0);
            clock.advance(Duration.ofSeconds(29));
            assertThat(stats).isNotDone();
            clock.advance(Duration.ofSeconds(1));
            assertThat(stats.get(5, TimeUnit.SECONDS)).hasSize(1);
        }
    }

    @Test
    void hangWithoutDurationEndsOnlyWhenClosed() throws Exception {
        DevicePlugin p = plugin("faults:\n  - {fault: hang, afterCalls: 1}\n");
        p.fingerprint();
        Future<Fingerprint> hung = calls.submit(p::fingerprint);
        await().until(() -> clock.waiters() > 0);
        clock.advance(Duration.ofDays(365));
        assertThat(hung).isNotDone();
        p.close();
        assertThatThrownBy(() -> hung.get(5, TimeUnit.SECONDS)).hasRootCauseMessage("device plugin fake is closed");
    }

    @Test
    void invalidOutputIsCaughtByTheValidator() throws Exception {
        try (DevicePlugin p = plugin("faults:\n  - {fault: invalid, afterCalls: 1}\n"
                + "  - {fault: invalid, output: empty-vendor, from: 1m}\n")) {
            assertThat(FingerprintValidator.problems(p.fingerprint())).isEmpty();
            Fingerprint dup = p.fingerprint();
            assertThatThrownBy(() -> FingerprintValidator.validate("fake", dup))
                    .isInstanceOf(InvalidFingerprintException.class)
                    .hasMessageContaining("instance id GPU-a appears more than once");
        }
    }

    @Test
    void closedPluginRefusesCalls() throws Exception {
        DevicePlugin p = plugin("");
        p.close();
        p.close();
        assertThatThrownBy(p::fingerprint).hasMessage("device plugin fake is closed");
    }

    private static DeviceInstance instance(Fingerprint fp, String id) {
        return fp.instances().stream()
                .filter(i -> i.id().equals(id))
                .findFirst()
                .orElseThrow();
    }
}
