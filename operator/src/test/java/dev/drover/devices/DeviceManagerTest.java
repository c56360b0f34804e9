package dev.drover.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.deviceplugin.DevicePlugins;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The device manager over the fake plugin and its scripted faults. */
class DeviceManagerTest {

    static final DeviceManager.Timing FAST = new DeviceManager.Timing(
            Duration.ofMillis(300),
            Duration.ofMillis(100),
            Duration.ofMillis(100),
            Duration.ofMillis(50),
            Duration.ofMillis(200));

    @TempDir
    Path dir;

    DeviceManager manager(String faults) throws Exception {
        Path file = dir.resolve("gpus.yaml");
        Files.writeString(file, """
                groups:
                  - vendor: nvidia
                    type: gpu
                    model: Tesla T4
                    instances:
                      - id: GPU-a
                        stats: {gpuUtilPercent: 37, memoryUsedMiB: 2048}
                      - id: GPU-b
                """ + faults);
        return new DeviceManager(List.of(DevicePlugins.discover().select("fake:" + file)), FAST);
    }

    @Test
    void devicesAreIndexedWithTheirStats() throws Exception {
        try (DeviceManager m = manager("")) {
            assertThat(m.awaitFirstFingerprints(Duration.ofSeconds(5))).isTrue();
            assertThat(m.devices()).containsOnlyKeys("GPU-a", "GPU-b");
            assertThat(m.healthyMatching("nvidia/gpu/Tesla T4")).hasSize(2);
            assertThat(m.healthyMatching("gpu")).hasSize(2);
            assertThat(m.healthyMatching("amd/gpu")).isEmpty();
            await().atMost(Duration.ofSeconds(5)).until(() -> m.stats("GPU-a").isPresent());
            assertThat(m.stats("GPU-a").orElseThrow().gpuUtilPercent().getAsDouble())
                    .isEqualTo(37);
            assertThat(m.reserve(List.of("GPU-b")).env()).containsEntry("NVIDIA_VISIBLE_DEVICES", "GPU-b");
        }
    }

    /** A plugin reports its fingerprint again after each change wait; a reader meanwhile never sees a part of it. */
    @Test
    void aRepublishedFingerprintIsNeverSeenHalfWritten() throws Exception {
        try (DeviceManager m = manager("")) {
            assertThat(m.awaitFirstFingerprints(Duration.ofSeconds(5))).isTrue();
            long end = System.nanoTime() + Duration.ofMillis(1500).toNanos();
            long reads = 0;
            while (System.nanoTime() < end) {
                assertThat(m.devices()).as("read %d", reads).containsOnlyKeys("GPU-a", "GPU-b");
                assertThat(m.device("GPU-a")).as("read %d", reads).isPresent();
                reads++;
            }
        }
    }

    @Test
    void reservationsNameTheirGpusToCudaAndOnlyManagedGpusAreOffered() throws Exception {
        try (DeviceManager m = manager("")) {
            assertThat(m.awaitFirstFingerprints(Duration.ofSeconds(5))).isTrue();
            assertThat(m.reserve(List.of("GPU-b", "GPU-a")).env())
                    .isEqualTo(Map.of("CUDA_VISIBLE_DEVICES", "GPU-b,GPU-a", "NVIDIA_VISIBLE_DEVICES", "GPU-b,GPU-a"));
            assertThat(m.reserve(List.of("GPU-a")).env())
                    .isEqualTo(Map.of("CUDA_VISIBLE_DEVICES", "GPU-a", "NVIDIA_VISIBLE_DEVICES", "GPU-a"));
        }
        Path file = dir.resolve("gpus.yaml");
        var managed = DevicePlugins.discover().select("fake:" + file).withConfig(Map.of("devices", List.of(1)));
        try (DeviceManager m = new DeviceManager(List.of(managed), FAST)) {
            assertThat(m.awaitFirstFingerprints(Duration.ofSeconds(5))).isTrue();
            assertThat(m.devices()).containsOnlyKeys("GPU-b");
            assertThat(m.healthyMatching("nvidia/gpu")).hasSize(1);
        }
    }

    @Test
    void aCrashingPluginKeepsItsDevicesListedAsUnhealthyAndIsRestarted() throws Exception {
        try (DeviceManager m = manager("""
                faults:
                  - {fault: crash, from: 700ms, until: 2s, message: "driver went away"}
                """)) {
            assertThat(m.awaitFirstFingerprints(Duration.ofSeconds(5))).isTrue();
            assertThat(m.healthyMatching("gpu")).hasSize(2);
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> m.healthyMatching("gpu").isEmpty());
            assertThat(m.devices()).as("still listed while the plugin is down").containsOnlyKeys("GPU-a", "GPU-b");
            assertThat(m.device("GPU-a").orElseThrow().health()).contains("driver went away");
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> m.healthyMatching("gpu").size() == 2);
        }
    }

    @Test
    void anInvalidFingerprintIsRejectedWhole() throws Exception {
        try (DeviceManager m = manager("""
                faults:
                  - {fault: invalid, output: duplicate-ids, until: 1s}
                """)) {
            m.awaitFirstFingerprints(Duration.ofSeconds(5));
            assertThat(m.devices()).as("nothing from an invalid fingerprint").isEmpty();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> m.healthyMatching("gpu").size() == 2);
        }
    }

    @Test
    void aHungPluginIsGivenUpOnAndRestarted() throws Exception {
        try (DeviceManager m = manager("""
                faults:
                  - {fault: hang, afterCalls: 1, until: 1500ms}
                """)) {
            assertThat(m.awaitFirstFingerprints(Duration.ofSeconds(5))).isTrue();
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> m.healthyMatching("gpu").isEmpty());
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> m.healthyMatching("gpu").size() == 2);
        }
    }

    @Test
    void allocationStatsMergeOneGroupUsedByTwoTasksIntoOneEntry() throws Exception {
        Path file = dir.resolve("two.yaml");
        Files.writeString(file, """
                groups:
                  - vendor: nvidia
                    type: gpu
                    model: Tesla T4
                    instances:
                      - id: GPU-a
                        stats: {gpuUtilPercent: 40, memoryUsedMiB: 1000, memoryTotalMiB: 15360, temperatureC: 50, powerW: 30}
                      - id: GPU-b
                        stats: {gpuUtilPercent: 20, memoryUsedMiB: 500, memoryTotalMiB: 15360, temperatureC: 60, powerW: 10}
                """);
        try (DeviceManager m =
                new DeviceManager(List.of(DevicePlugins.discover().select("fake:" + file)), FAST)) {
            m.awaitFirstFingerprints(Duration.ofSeconds(5));
            await().atMost(Duration.ofSeconds(5))
                    .until(() ->
                            m.stats("GPU-a").isPresent() && m.stats("GPU-b").isPresent());
            DeviceStats.AllocationStats stats = DeviceStats.of(
                    List.of(
                            new dev.drover.state.DeviceReservation(
                                    "web", "nvidia", "gpu", "Tesla T4", List.of("GPU-a")),
                            new dev.drover.state.DeviceReservation(
                                    "worker", "nvidia", "gpu", "Tesla T4", List.of("GPU-b"))),
                    m);
            assertThat(stats.byTask()).containsOnlyKeys("web", "worker");
            assertThat(stats.byGroup()).singleElement().satisfies(g -> {
                assertThat(g.ids()).containsExactly("GPU-a", "GPU-b");
                assertThat(g.gpuUtilPercent().getAsDouble()).isEqualTo(30.0);
                assertThat(g.memoryUsedMiB().getAsLong()).isEqualTo(1500);
                assertThat(g.memoryTotalMiB().getAsLong()).isEqualTo(30720);
                assertThat(g.temperatureC().getAsDouble()).isEqualTo(60.0);
                assertThat(g.powerW().getAsDouble()).isEqualTo(40.0);
            });
        }
    }
}
