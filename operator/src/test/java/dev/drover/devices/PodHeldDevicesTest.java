package dev.drover.devices;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.podresources.PodDevices;
import dev.drover.podresources.PodResourcesException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which instances Pods hold, and what is withheld when the kubelet does not say. */
class PodHeldDevicesTest {

    @TempDir
    Path dir;

    final AtomicLong clock = new AtomicLong();
    final List<Object> answers = new ArrayList<>(); // each call takes the first: a List<PodDevices> or an exception
    int calls;

    static DeviceManager.Device gpu(String uuid, int index) {
        DeviceInstance i = new DeviceInstance(
                uuid, true, "", Optional.empty(), Optional.of(DeviceInstance.GpuSlot.whole(index, uuid)));
        return new DeviceManager.Device("fake", group(i), i, true, "");
    }

    static DeviceManager.Device mig(String uuid, int index, String parent) {
        DeviceInstance i = new DeviceInstance(
                uuid,
                true,
                "",
                Optional.empty(),
                Optional.of(new DeviceInstance.GpuSlot(index, parent, OptionalInt.of(1))));
        return new DeviceManager.Device("fake", group(i), i, true, "");
    }

    static DeviceGroup group(DeviceInstance i) {
        return new DeviceGroup("nvidia", "gpu", "Tesla T4", Map.of(), List.of(i));
    }

    static Map<String, DeviceManager.Device> node(DeviceManager.Device... ds) {
        Map<String, DeviceManager.Device> m = new LinkedHashMap<>();
        for (DeviceManager.Device d : ds) {
            m.put(d.instance().id(), d);
        }
        return m;
    }

    static PodDevices pod(String name, String resource, String... ids) {
        return new PodDevices("ml", name, "main", resource, List.of(ids));
    }

    PodHeldDevices held(Path socket, Map<String, DeviceManager.Device> devices) {
        PodHeldDevices.Lister lister = () -> {
            calls++;
            Object next = answers.size() > 1 ? answers.removeFirst() : answers.getFirst();
            if (next instanceof PodResourcesException e) {
                throw e;
            }
            @SuppressWarnings("unchecked")
            List<PodDevices> pods = (List<PodDevices>) next;
            return pods;
        };
        return new PodHeldDevices(socket, lister, () -> devices, PodHeldDevices.Timing.DEFAULT, clock::get);
    }

    Path socket() throws Exception {
        return Files.createFile(dir.resolve("kubelet.sock")); // there: the kubelet is asked
    }

    @Test
    void withoutTheKubeletsSocketNoInstanceIsHeldAndNothingIsAsked() {
        PodHeldDevices held = held(dir.resolve("absent.sock"), node(gpu("GPU-a", 0)));

        assertThat(held.fresh()).isEqualTo(HeldByPods.View.NONE);
        assertThat(held.fresh().withholds("GPU-a")).isFalse();
        assertThat(calls).isZero();
    }

    @Test
    void podsHoldInstancesNamedByUuidByGpuIndexOrAsTheirGpu() throws Exception {
        answers.add(List.of(
                pod("by-uuid", "nvidia.com/gpu", "GPU-a"),
                pod("by-index", "nvidia.com/gpu", "1"),
                pod("replica", "nvidia.com/gpu", "GPU-c::3"),
                pod("whole-of-mig", "nvidia.com/gpu", "GPU-d"),
                pod("other-resource", "example.com/fpga", "2")));
        PodHeldDevices held = held(
                socket(),
                node(gpu("GPU-a", 0), gpu("GPU-b", 1), gpu("GPU-c", 2), mig("MIG-d1", 3, "GPU-d"), gpu("GPU-e", 4)));

        assertThat(held.fresh().holders())
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        "GPU-a", "ml/by-uuid",
                        "GPU-b", "ml/by-index",
                        "GPU-c", "ml/replica",
                        "MIG-d1", "ml/whole-of-mig"));
        assertThat(held.fresh().withholds("GPU-e")).isFalse();
    }

    @Test
    void anAnswerServesAdmissionsForOneSecond() throws Exception {
        answers.add(List.of(pod("p", "nvidia.com/gpu", "GPU-a")));
        PodHeldDevices held = held(socket(), node(gpu("GPU-a", 0)));

        held.fresh();
        clock.addAndGet(Duration.ofMillis(999).toNanos());
        held.fresh();
        assertThat(calls).isEqualTo(1);
        clock.addAndGet(Duration.ofMillis(1).toNanos());
        held.fresh();
        assertThat(calls).isEqualTo(2);
    }

    @Test
    void aKubeletThatStopsAnsweringHasItsLastAnswerKeptAMinuteThenEveryInstanceIsWithheld() throws Exception {
        answers.add(List.of(pod("p", "nvidia.com/gpu", "GPU-a")));
        answers.add(new PodResourcesException("the kubelet's PodResources API at x did not answer within 5000 ms"));
        PodHeldDevices held = held(socket(), node(gpu("GPU-a", 0), gpu("GPU-b", 1)));
        List<HeldByPods.View> told = new ArrayList<>();
        held.onChange(told::add);

        assertThat(held.fresh().holders()).containsOnlyKeys("GPU-a");
        clock.addAndGet(Duration.ofSeconds(60).toNanos());
        assertThat(held.fresh().holders()).as("the last answer, a minute old").containsOnlyKeys("GPU-a");
        assertThat(held.fresh().withholds("GPU-b")).isFalse();
        clock.addAndGet(Duration.ofSeconds(1).toNanos());
        HeldByPods.View v = held.fresh();
        assertThat(v.known()).isFalse();
        assertThat(v.withholds("GPU-b")).isTrue();
        assertThat(v.why()).endsWith("did not answer within 5000 ms");
        assertThat(held.last()).isEqualTo(v);
        assertThat(told).hasSize(2);
    }

    @Test
    void aKubeletThatNeverAnsweredWithholdsEveryInstanceAtOnce() throws Exception {
        answers.add(new PodResourcesException("the kubelet's PodResources API at x answered gRPC status 14"));
        PodHeldDevices held = held(socket(), node(gpu("GPU-a", 0)));

        assertThat(held.fresh().withholds("GPU-a")).isTrue();
    }

    @Test
    void aSocketGoneAfterItAnsweredIsAFailureNotAnAbsentKubelet() throws Exception {
        Path socket = socket();
        answers.add(List.of());
        answers.add(new PodResourcesException("the kubelet's PodResources API at x cannot be reached"));
        PodHeldDevices held = held(socket, node(gpu("GPU-a", 0)));
        assertThat(held.fresh().known()).isTrue();

        Files.delete(socket);
        clock.addAndGet(Duration.ofMinutes(2).toNanos());
        assertThat(held.fresh().known()).isFalse();
        assertThat(calls).isEqualTo(2);
    }
}
