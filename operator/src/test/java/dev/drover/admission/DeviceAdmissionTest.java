package dev.drover.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.api.v1alpha1.Resources;
import dev.drover.api.v1alpha1.Task;
import dev.drover.state.AllocId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Devices decided by {@link NodeAdmission} together with CPU and memory: table tests, no ledger, no plugin. */
class DeviceAdmissionTest {

    final NodeAdmission node = new NodeAdmission(new CpuMemory(4000, 1024));

    static Device gpu(String id) {
        return new Device(id, "nvidia", "gpu", "Tesla T4");
    }

    static Requests asking(CpuMemory cpuMemory, String task, String device, int count) {
        return new Requests(cpuMemory, Map.of(task, List.of(new DeviceRequest(device, count))));
    }

    static List<String> ids(Decision d, String task) {
        return d.devices().getOrDefault(task, List.of()).stream()
                .map(Device::id)
                .toList();
    }

    /** A node's free instances, less those each admitted allocation got: what the ledger offers the next one. */
    static final class Free {
        final List<Device> all;
        final Set<String> taken = new HashSet<>();

        Free(Device... all) {
            this.all = List.of(all);
        }

        DeviceOffer offer() {
            return new DeviceOffer(
                    all.stream().filter(d -> !taken.contains(d.id())).toList(), Map.of());
        }

        void take(Decision d) {
            d.devices().values().forEach(ds -> ds.forEach(x -> taken.add(x.id())));
        }
    }

    @Test
    void oneGpuAllocationsAreAdmittedInTheOrderOfferedUntilTheGpusRunOut() {
        Free free = new Free(gpu("GPU-b"), gpu("GPU-a"));
        List<Decision> decisions = new ArrayList<>();
        for (String name : List.of("first", "second", "third")) {
            Decision d = node.admit(
                    new AllocId("default", name),
                    asking(new CpuMemory(100, 10), "main", "nvidia/gpu", 1),
                    free.offer());
            free.take(d);
            decisions.add(d);
        }

        assertThat(ids(decisions.get(0), "main")).containsExactly("GPU-b");
        assertThat(ids(decisions.get(1), "main")).containsExactly("GPU-a");
        Decision third = decisions.get(2);
        assertThat(third.admitted()).isFalse();
        assertThat(third.reason()).isEqualTo("OutOfdevices");
        assertThat(third.message())
                .isEqualTo("The node cannot fit this allocation: device nvidia/gpu: asked 1, 0 free");
        assertThat(third.devices()).isEmpty();
        assertThat(node.usage().requested())
                .as("the refused one takes no CPU or memory either")
                .isEqualTo(new CpuMemory(200, 20));
        assertThat(node.refusals()).isEqualTo(Map.of("OutOfdevices", 1L));
    }

    @Test
    void anAllocationShortOfCpuGetsNoDevicesAndOneShortOfDevicesNoCpu() {
        DeviceOffer two = new DeviceOffer(List.of(gpu("GPU-a"), gpu("GPU-b")), Map.of());

        Decision cpu = node.admit(new AllocId("default", "cpu"), asking(new CpuMemory(5000, 0), "main", "gpu", 1), two);
        assertThat(cpu.reason()).as("CPU is told first").isEqualTo("OutOfcpu");
        assertThat(cpu.devices()).isEmpty();

        Decision both = node.admit(
                new AllocId("default", "both"), asking(new CpuMemory(0, 2048), "main", "nvidia/gpu", 3), two);
        assertThat(both.reason()).isEqualTo("OutOfmemory");
        assertThat(both.message())
                .endsWith("requested 2048 MB of memory, 1024 free of 1024 allocatable; device nvidia/gpu: asked 3, 2"
                        + " free");
        assertThat(node.usage().admitted()).isZero();
    }

    @Test
    void aRequestNamesATypeAVendorAndTypeOrAModel() {
        Device t4 = gpu("GPU-t4");
        Device a100 = new Device("GPU-a100", "nvidia", "gpu", "A100");
        Device fpga = new Device("FPGA-0", "intel", "fpga", "Agilex");
        DeviceOffer offer = new DeviceOffer(List.of(a100, fpga, t4), Map.of());
        Map<String, List<String>> table = Map.of(
                "gpu", List.of("GPU-a100"),
                "nvidia/gpu", List.of("GPU-a100"),
                "nvidia/gpu/Tesla T4", List.of("GPU-t4"),
                "fpga", List.of("FPGA-0"),
                "intel/fpga/Agilex", List.of("FPGA-0"));
        table.forEach((request, expected) -> assertThat(ids(
                        new NodeAdmission(CpuMemory.ZERO)
                                .admit(new AllocId("default", "a"), asking(CpuMemory.ZERO, "t", request, 1), offer),
                        "t"))
                .as(request)
                .isEqualTo(expected));
        for (String none : List.of("amd/gpu", "nvidia/gpu/V100", "tpu")) {
            Decision d = new NodeAdmission(CpuMemory.ZERO)
                    .admit(new AllocId("default", "a"), asking(CpuMemory.ZERO, "t", none, 1), offer);
            assertThat(d.reason()).as(none).isEqualTo("OutOfdevices");
            assertThat(d.message()).as(none).endsWith("device " + none + ": asked 1, 0 free");
        }
    }

    @Test
    void tasksAskingForTheSameDeviceAreCountedTogether() {
        Requests asks = new Requests(
                CpuMemory.ZERO,
                Map.of(
                        "a", List.of(new DeviceRequest("gpu", 1)),
                        "b", List.of(new DeviceRequest("gpu", null))));
        Decision d = node.admit(new AllocId("default", "pair"), asks, new DeviceOffer(List.of(gpu("GPU-a")), Map.of()));

        assertThat(d.message()).endsWith("device gpu: asked 2, 1 free");
        Decision fits = node.admit(
                new AllocId("default", "pair"), asks, new DeviceOffer(List.of(gpu("GPU-a"), gpu("GPU-b")), Map.of()));
        assertThat(fits.devices().values())
                .flatMap(x -> x)
                .extracting(Device::id)
                .containsExactlyInAnyOrder("GPU-a", "GPU-b");
    }

    @Test
    void hugeDeviceCountsAreSummedWithoutOverflowInTheRefusal() {
        Requests asks = new Requests(
                CpuMemory.ZERO,
                Map.of(
                        "a", List.of(new DeviceRequest("gpu", Integer.MAX_VALUE), new DeviceRequest("gpu", 2)),
                        "b", List.of(new DeviceRequest("gpu", Integer.MAX_VALUE))));

        Decision d =
                node.admit(new AllocId("default", "greedy"), asks, new DeviceOffer(List.of(gpu("GPU-a")), Map.of()));

        assertThat(d.reason()).isEqualTo("OutOfdevices");
        assertThat(d.message())
                .as("2^31-1 + 2 + 2^31-1 is 2^32, which an int sum wraps to 0")
                .endsWith("device gpu: asked 4294967296, 1 free");
    }

    @Test
    void anUpdateKeepsTheInstancesATaskHoldsAndIsRefusedWhenMoreDoNotFit() {
        AllocId id = new AllocId("default", "trainer");
        DeviceOffer start = new DeviceOffer(List.of(gpu("GPU-a"), gpu("GPU-b"), gpu("GPU-c")), Map.of());
        node.admit(id, asking(CpuMemory.ZERO, "main", "gpu", 1), start);
        // GPU-a is its own now; another allocation took GPU-b meanwhile
        DeviceOffer now = new DeviceOffer(List.of(gpu("GPU-c")), Map.of("main", List.of(gpu("GPU-a"))));

        assertThat(ids(node.resize(id, asking(CpuMemory.ZERO, "main", "gpu", 1), now), "main"))
                .as("unchanged: the same instance")
                .containsExactly("GPU-a");
        assertThat(ids(node.resize(id, asking(CpuMemory.ZERO, "main", "gpu", 2), now), "main"))
                .as("grown: its own first")
                .containsExactly("GPU-a", "GPU-c");
        Decision tooMany = node.resize(id, asking(CpuMemory.ZERO, "main", "gpu", 3), now);
        assertThat(tooMany.reason()).isEqualTo("OutOfdevices");
        assertThat(tooMany.message())
                .isEqualTo("The node cannot fit the allocation's new requests, so it runs on as it was: device gpu:"
                        + " asked 3, 2 free");
        assertThat(node.resize(id, new Requests(CpuMemory.ZERO, Map.of()), now).devices())
                .as("no longer asked: given back")
                .isEmpty();
    }

    @Test
    void anAllocationTakenOnAgainKeepsWhatItHolds() {
        AllocId id = new AllocId("default", "again");
        Decision d = node.admit(
                id,
                asking(CpuMemory.ZERO, "main", "gpu", 1),
                new DeviceOffer(List.of(gpu("GPU-a")), Map.of("main", List.of(gpu("GPU-z")))));
        assertThat(ids(d, "main")).containsExactly("GPU-z");
    }

    @Test
    void anAllocationAsksForItsTasksDevicesAndNoneWhenCreatedStopped() {
        Task gpuTask = new Task();
        gpuTask.setName("train");
        Resources r = new Resources();
        r.setCpuMillis(500);
        r.setDevices(List.of(new DeviceRequest("nvidia/gpu", 2)));
        gpuTask.setResources(r);
        Task plain = new Task();
        plain.setName("log");
        AllocationSpec spec = new AllocationSpec();
        spec.setTasks(List.of(plain, gpuTask));

        Requests asks = Requests.of(spec);
        assertThat(asks.cpuMemory()).isEqualTo(new CpuMemory(500, 0));
        assertThat(asks.devices()).containsOnlyKeys("train");
        assertThat(asks.devices().get("train")).containsExactly(new DeviceRequest("nvidia/gpu", 2));

        spec.setDesiredStatus(DesiredStatus.Stop);
        assertThat(Requests.of(spec)).isEqualTo(Requests.NONE);
    }
}
