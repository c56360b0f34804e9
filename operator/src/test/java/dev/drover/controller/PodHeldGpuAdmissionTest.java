package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.drover.admission.CpuMemory;
import dev.drover.admission.Decision;
import dev.drover.admission.Device;
import dev.drover.admission.NodeAdmission;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.devices.DeviceLedger;
import dev.drover.devices.DeviceManager;
import dev.drover.devices.PodHeldDevices;
import dev.drover.podresources.FakePodResources;
import dev.drover.podresources.PodDevices;
import dev.drover.podresources.PodResourcesClient;
import dev.drover.podresources.PodResourcesException;
import dev.drover.state.AllocId;
import dev.drover.state.StateStores;
import dev.drover.testing.LiveThreads;
import io.fabric8.kubernetes.client.utils.Serialization;
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
import org.slf4j.LoggerFactory;

/**
 * The agent shares its GPUs with the NVIDIA device plugin: admission never reserves one the kubelet's PodResources
 * API (a fake, on a real socket) says a Pod holds. Fake device plugin, real ledger and admissions.
 */
class PodHeldGpuAdmissionTest {

    @TempDir
    Path dir;

    DeviceManager devices;
    FakePodResources kubelet;
    PodResourcesClient client;
    PodHeldDevices held;
    DeviceLedger ledger;
    Admissions admissions;

    @BeforeEach
    void node() throws Exception {
        Path file = Files.writeString(dir.resolve("gpus.yaml"), """
                groups:
                  - vendor: nvidia
                    type: gpu
                    model: Tesla T4
                    instances:
                      - {id: GPU-a, gpuIndex: 0}
                      - {id: GPU-b, gpuIndex: 1}
                """);
        devices = new DeviceManager(
                List.of(DevicePlugins.discover()
                        .select("fake:" + file)
                        .withConfig(Map.of("cdiSpecDir", dir.resolve("cdi").toString()))),
                DeviceManager.Timing.DEFAULT);
        assertThat(devices.awaitFirstFingerprints(Duration.ofSeconds(10))).isTrue();
        kubelet = FakePodResources.start(dir.resolve("kubelet.sock"));
        client = new PodResourcesClient(kubelet.socket(), Duration.ofSeconds(5));
        held = PodHeldDevices.start(
                kubelet.socket(),
                client::list,
                devices,
                new PodHeldDevices.Timing(Duration.ZERO, Duration.ofHours(1), Duration.ofMinutes(1)));
        ledger = new DeviceLedger(devices, StateStores.inMemory(), held);
        admissions = new Admissions(new NodeAdmission(new CpuMemory(4000, 4096)), ledger, () -> {});
    }

    @AfterEach
    void close() throws Exception {
        held.close();
        client.close();
        kubelet.close();
        devices.close();
    }

    static Allocation asking(String name, int gpus) {
        return Serialization.unmarshal(
                "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: " + name
                        + ", namespace: team}\nspec:\n  nodeName: n\n  tasks: [{name: train, driver: mock,"
                        + " resources: {cpuMillis: 100, devices: [{name: nvidia/gpu, count: " + gpus + "}]}}]\n",
                Allocation.class);
    }

    Decision takeOn(String name, int gpus) throws InterruptedException {
        return admissions.takeOn(new AllocId("team", name), asking(name, gpus)).decision();
    }

    static List<String> ids(Decision d) {
        return d.devices().getOrDefault("train", List.of()).stream()
                .map(Device::id)
                .toList();
    }

    @Test
    void aGpuAPodHoldsIsNeverReservedForAnAllocation() throws InterruptedException {
        kubelet.hold("ml", "trainer-0", "nvidia.com/gpu", "GPU-a");

        Decision both = takeOn("both", 2);
        assertThat(both.admitted()).isFalse();
        assertThat(both.reason()).isEqualTo(NodeAdmission.OUT_OF_DEVICES);

        Decision one = takeOn("one", 1);
        assertThat(one.admitted()).isTrue();
        assertThat(ids(one)).containsExactly("GPU-b");
        assertThat(ledger.holders()).containsOnlyKeys("GPU-b");
    }

    @Test
    void aGpuAPodHoldsByIndexIsNeverReserved() throws InterruptedException {
        kubelet.hold("ml", "trainer-0", "nvidia.com/gpu", "1");

        Decision one = takeOn("one", 1);
        assertThat(ids(one)).containsExactly("GPU-a");
        assertThat(takeOn("two", 1).admitted()).isFalse();
    }

    @Test
    void aGpuFreedByItsPodIsOfferedAgain() throws InterruptedException {
        kubelet.hold("ml", "trainer-0", "nvidia.com/gpu", "GPU-a", "GPU-b");
        assertThat(takeOn("early", 1).admitted()).isFalse();

        kubelet.hold(List.of());
        assertThat(takeOn("later", 2).admitted()).isTrue();
    }

    @Test
    void anAllocationAskingForNoDeviceNeverWaitsForTheKubelet() throws InterruptedException {
        await().atMost(Duration.ofSeconds(10)).until(() -> kubelet.calls() >= 1); // the first periodic ask
        int before = kubelet.calls();
        kubelet.stall();

        Decision d = admissions
                .takeOn(new AllocId("team", "cpu"), Serialization.unmarshal("""
                        apiVersion: drover.dev/v1alpha1
                        kind: Allocation
                        metadata: {name: cpu, namespace: team}
                        spec:
                          nodeName: n
                          tasks: [{name: web, driver: mock, resources: {cpuMillis: 100}}]
                        """, Allocation.class))
                .decision();
        assertThat(d.admitted()).isTrue();
        assertThat(kubelet.calls()).isEqualTo(before);
    }

    @Test
    void noGpuIsHandedOutWhileTheKubeletsSocketDoesNotAnswer() throws InterruptedException {
        kubelet.failWith(14, "kubelet is shutting down");

        Decision d = takeOn("blind", 1);
        assertThat(d.admitted()).isFalse();
        assertThat(d.reason()).isEqualTo(NodeAdmission.OUT_OF_DEVICES);
        assertThat(held.last().why()).contains("gRPC status 14 (UNAVAILABLE)");
    }

    @Test
    void aPodGivenAGpuAnAllocationHoldsIsAConflictLoggedOnceAndTheAllocationKeepsIt() throws InterruptedException {
        Logger log = (Logger) LoggerFactory.getLogger(DeviceLedger.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        log.addAppender(lines);
        try {
            assertThat(ids(takeOn("first", 1))).containsExactly("GPU-a");
            kubelet.hold("ml", "trainer-0", "nvidia.com/gpu", "GPU-a");

            assertThat(takeOn("second", 1).admitted()).isTrue();
            assertThat(takeOn("third", 1).admitted()).isFalse();
            assertThat(lines.list)
                    .filteredOn(e -> e.getLevel() == Level.WARN)
                    .singleElement()
                    .extracting(ILoggingEvent::getFormattedMessage)
                    .asString()
                    .startsWith("device instance GPU-a is reserved for allocation team/first and Pod ml/trainer-0"
                            + " holds it too");
            assertThat(ledger.holders()).containsOnlyKeys("GPU-a", "GPU-b");
        } finally {
            log.detachAppender(lines);
        }
    }

    @Test
    void closingLeavesNoThreadOfTheKubeletsClientBehind() throws Exception {
        held.close(); // the fixture's reader may start its threads late: only this test's are looked at
        client.close();
        Set<Long> before = LiveThreads.ids(LiveThreads.now()); // virtual threads too
        PodResourcesClient other = new PodResourcesClient(kubelet.socket(), Duration.ofSeconds(5));
        PodHeldDevices reader = PodHeldDevices.start(
                kubelet.socket(),
                new PodHeldDevices.Lister() {
                    @Override
                    public List<PodDevices> list() throws PodResourcesException, InterruptedException {
                        return other.list();
                    }

                    @Override
                    public void close() {
                        other.close();
                    }
                },
                devices,
                PodHeldDevices.Timing.DEFAULT);
        kubelet.hold("ml", "p", "nvidia.com/gpu", "GPU-b");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> reader.fresh().holders().containsKey("GPU-b"));

        reader.close();
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(LiveThreads.startedSince(
                                before,
                                t -> t.name().startsWith("awaitility")
                                        || t.name().startsWith("qtp")
                                        || t.name().startsWith("fake-kubelet")))
                        .isEmpty());
    }
}
