package dev.drover.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.admission.Device;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.api.v1alpha1.Resources;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.devices.cdi.CdiRegistry;
import dev.drover.driver.TaskConfig;
import dev.drover.state.AllocId;
import dev.drover.state.StateStores;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookContexts;
import dev.drover.taskrunner.TaskHookException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeviceReservationHookTest {

    static final AllocId ALLOC = new AllocId("team", "a");

    @TempDir
    Path dir;

    DeviceManager devices;
    DeviceLedger ledger;

    @BeforeEach
    void gpus() throws Exception {
        Path file = Files.writeString(dir.resolve("gpus.yaml"), """
                groups:
                  - vendor: nvidia
                    type: gpu
                    model: Tesla T4
                    instances:
                      - id: GPU-a
                      - id: GPU-b
                """);
        devices = new DeviceManager(
                List.of(DevicePlugins.discover()
                        .select("fake:" + file)
                        .withConfig(Map.of("cdiSpecDir", dir.resolve("cdi").toString()))),
                DeviceManager.Timing.DEFAULT);
        assertThat(devices.awaitFirstFingerprints(Duration.ofSeconds(10))).isTrue();
        ledger = new DeviceLedger(devices, StateStores.inMemory());
        ledger.reserve(ALLOC, Map.of("web", List.of(new Device("GPU-b", "nvidia", "gpu", "Tesla T4"))));
    }

    @AfterEach
    void close() {
        devices.close();
    }

    TaskConfig prestart(DeviceReservationHook hook, String driver) throws TaskHookException {
        Task task = new Task();
        task.setName("web");
        task.setDriver(driver);
        Resources r = new Resources();
        r.setDevices(List.of(new DeviceRequest("nvidia/gpu", 1)));
        task.setResources(r);
        AllocationSpec spec = new AllocationSpec();
        spec.setTasks(List.of(task));
        TaskConfig template =
                new TaskConfig("team", "a", "web", Map.of(), Map.of(), dir, dir.resolve("web"), dir, dir, null, null);
        TaskHookContext ctx = TaskHookContexts.of(ALLOC, task, spec, template);
        hook.prestart(ctx);
        return TaskHookContexts.taskConfig(ctx);
    }

    @Test
    void theReservedGpusCdiNamesReachTheDriverBesideItsVariables() throws Exception {
        DeviceReservationHook hook = new DeviceReservationHook(
                ledger, devices, new CdiRegistry(List.of(dir.resolve("cdi")), Set.of()), Set.of("oci"));
        TaskConfig t = prestart(hook, "oci");
        assertThat(t.attachments().cdiDevices()).containsExactly("fake.drover.dev/device=GPU-b");
        assertThat(t.env()).containsEntry("CUDA_VISIBLE_DEVICES", "GPU-b");
    }

    @Test
    void aContainerTaskWhoseDeviceNoSpecDescribesFailsItsSetup() throws Exception {
        DeviceReservationHook hook = new DeviceReservationHook(
                ledger, devices, new CdiRegistry(List.of(dir.resolve("elsewhere")), Set.of()), Set.of("oci"));
        assertThatThrownBy(() -> prestart(hook, "oci"))
                .isInstanceOfSatisfying(
                        TaskHookException.class, e -> assertThat(e.eventType()).isEqualTo(TaskEventType.SetupFailure))
                .hasMessageContaining("cannot give the container its devices: unknown CDI device"
                        + " \"fake.drover.dev/device=GPU-b\"");
        assertThat(prestart(hook, "raw_exec").attachments().cdiDevices())
                .as("a host process needs no spec: its names pass on unresolved")
                .containsExactly("fake.drover.dev/device=GPU-b");
    }
}
