package dev.drover.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.Decision;
import dev.drover.admission.NodeAdmission;
import dev.drover.admission.Requests;
import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.metrics.Exposition;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The device series, as a scrape shows them: labelled as dcgm-exporter labels GPUs, with their holders. */
class DeviceMetricsTest {

    @TempDir
    Path dir;

    static final String DEVICES = """
            groups:
              - vendor: nvidia
                type: gpu
                model: Tesla T4
                instances:
                  - id: GPU-a
                    pciBusId: "00000000:00:1E.0"
                    gpuIndex: 0
                    stats: {gpuUtilPercent: 37, memoryUsedMiB: 2048}
                  - id: GPU-b
                    pciBusId: "00000000:00:1F.0"
                    gpuIndex: 1
              - vendor: nvidia
                type: gpu
                model: NVIDIA A100-SXM4-40GB MIG 3g.20gb
                instances:
                  - {id: MIG-c1, pciBusId: "00000000:07:00.0", gpuIndex: 2, migParent: GPU-c, gpuInstanceId: 1}
                  - {id: MIG-c2, pciBusId: "00000000:07:00.0", gpuIndex: 2, migParent: GPU-c, gpuInstanceId: 2}
              - vendor: acme
                type: fpga
                model: F1
                instances:
                  - id: fpga-0
            """;

    String scrape() throws Exception {
        Path file = dir.resolve("devices.yaml");
        Files.writeString(file, DEVICES);
        try (DeviceManager m = new DeviceManager(
                        List.of(DevicePlugins.discover().select("fake:" + file)), DeviceManagerTest.FAST);
                StateDB db = StateStores.inMemory()) {
            m.awaitFirstFingerprints(Duration.ofSeconds(5));
            DeviceLedger ledger = new DeviceLedger(m, db);
            AllocId train = new AllocId("default", "train");
            Decision admitted = new NodeAdmission(CpuMemory.ZERO)
                    .admit(
                            train,
                            new Requests(
                                    CpuMemory.ZERO,
                                    Map.of("main", List.of(new DeviceRequest("nvidia/gpu/Tesla T4", 2)))),
                            ledger.offer(train));
            ledger.reserve(train, admitted.devices());
            await().atMost(Duration.ofSeconds(5)).until(() -> m.stats("GPU-a").isPresent());
            CollectorRegistry registry = new CollectorRegistry();
            new DeviceMetrics(m, ledger, "node-a").register(registry);
            StringWriter out = new StringWriter();
            Exposition.write(TextFormat.CONTENT_TYPE_004, out, registry);
            return out.toString();
        }
    }

    @Test
    void gpusCarryDcgmExportersLabelsAndTheirHolder() throws Exception {
        String text = scrape();
        assertThat(text)
                .contains(
                        "drover_device_healthy{gpu=\"0\",UUID=\"GPU-a\",pci_bus_id=\"00000000:00:1E.0\","
                                + "modelName=\"Tesla T4\",Hostname=\"node-a\",GPU_I_PROFILE=\"\",GPU_I_ID=\"\","
                                + "vendor=\"nvidia\",type=\"gpu\",namespace=\"default\",allocation=\"train\",task=\"main\",} 1.0")
                .contains(
                        "drover_device_gpu_utilization_percent{gpu=\"0\",UUID=\"GPU-a\",pci_bus_id=\"00000000:00:1E.0\","
                                + "modelName=\"Tesla T4\",Hostname=\"node-a\",GPU_I_PROFILE=\"\",GPU_I_ID=\"\","
                                + "vendor=\"nvidia\",type=\"gpu\",namespace=\"default\",allocation=\"train\",task=\"main\",} 37.0")
                .contains(
                        "drover_device_healthy{gpu=\"1\",UUID=\"GPU-b\",pci_bus_id=\"00000000:00:1F.0\","
                                + "modelName=\"Tesla T4\",Hostname=\"node-a\",GPU_I_PROFILE=\"\",GPU_I_ID=\"\","
                                + "vendor=\"nvidia\",type=\"gpu\",namespace=\"default\",allocation=\"train\",task=\"main\",} 1.0");
        assertThat(text.lines().filter(l -> l.startsWith("drover_device_temperature_celsius{")))
                .as("not reported: absent")
                .isEmpty();
    }

    @Test
    void migDevicesAreTheirGpusWithTheirProfileAndGpuInstance() throws Exception {
        String text = scrape();
        for (String id : List.of("1", "2")) {
            assertThat(text)
                    .contains("drover_device_healthy{gpu=\"2\",UUID=\"GPU-c\",pci_bus_id=\"00000000:07:00.0\","
                            + "modelName=\"NVIDIA A100-SXM4-40GB\",Hostname=\"node-a\",GPU_I_PROFILE=\"3g.20gb\","
                            + "GPU_I_ID=\"" + id + "\",vendor=\"nvidia\",type=\"gpu\",namespace=\"\",allocation=\"\","
                            + "task=\"\",} 1.0");
        }
    }

    @Test
    void aDeviceWhosePlaceIsNotToldIsNumberedInItsGroup() throws Exception {
        assertThat(scrape())
                .contains("drover_device_healthy{gpu=\"0\",UUID=\"fpga-0\",pci_bus_id=\"\",modelName=\"F1\","
                        + "Hostname=\"node-a\",GPU_I_PROFILE=\"\",GPU_I_ID=\"\",vendor=\"acme\",type=\"fpga\","
                        + "namespace=\"\",allocation=\"\",task=\"\",} 1.0");
    }
}
