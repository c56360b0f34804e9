package dev.drover.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.Resources;
import dev.drover.api.v1alpha1.Task;
import dev.drover.state.AllocId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NodeAdmissionTest {

    final NodeAdmission node = new NodeAdmission(new CpuMemory(4000, 1024));

    static AllocId id(String name) {
        return new AllocId("default", name);
    }

    Decision admit(String name, CpuMemory asks) {
        return node.admit(id(name), new Requests(asks, Map.of()), DeviceOffer.NONE);
    }

    Decision resize(String name, CpuMemory asks) {
        return node.resize(id(name), new Requests(asks, Map.of()), DeviceOffer.NONE);
    }

    @Test
    void allocationsAreAdmittedInTurnUntilTheNextDoesNotFit() {
        assertThat(admit("a", new CpuMemory(2500, 512)).admitted()).isTrue();
        Decision b = admit("b", new CpuMemory(2000, 256));

        assertThat(b.admitted()).isFalse();
        assertThat(b.reason()).isEqualTo("OutOfcpu");
        assertThat(b.message())
                .isEqualTo("The node cannot fit this allocation: requested 2000 millicores of CPU, 1500 free of 4000"
                        + " allocatable");
        assertThat(admit("c", new CpuMemory(1500, 512)).admitted())
                .as("an exact fit")
                .isTrue();
        assertThat(node.usage().free()).isEqualTo(CpuMemory.ZERO);
        assertThat(node.usage().admitted()).isEqualTo(2);
        assertThat(node.holds(id("b"))).isFalse();
    }

    @Test
    void memoryIsCheckedAndBothShortagesAreToldUnderTheFirstReason() {
        admit("a", new CpuMemory(3500, 900));

        Decision memory = admit("m", new CpuMemory(100, 200));
        assertThat(memory.reason()).isEqualTo("OutOfmemory");
        assertThat(memory.message()).endsWith("requested 200 MB of memory, 124 free of 1024 allocatable");

        Decision both = admit("both", new CpuMemory(600, 200));
        assertThat(both.reason()).isEqualTo("OutOfcpu");
        assertThat(both.message())
                .contains("requested 600 millicores of CPU, 500 free of 4000 allocatable; requested 200 MB of"
                        + " memory, 124 free");
        assertThat(node.refusals()).isEqualTo(Map.of("OutOfmemory", 1L, "OutOfcpu", 1L));
    }

    @Test
    void aRequestOfNothingAlwaysFitsEvenAnOvercommittedNode() {
        node.force(id("restored"), new CpuMemory(5000, 2048));
        assertThat(admit("free", CpuMemory.ZERO).admitted()).isTrue();
        assertThat(admit("cpu-only", new CpuMemory(0, 1)).reason()).isEqualTo("OutOfmemory");
        Decision d = admit("memory", new CpuMemory(1, 0));
        assertThat(d.message()).as("free is never told below 0").contains("0 free of 4000");
    }

    @Test
    void releasingFreesTheShareOnceAndAdmittingAgainKeepsTheFirstShare() {
        admit("a", new CpuMemory(4000, 1024));
        assertThat(admit("a", new CpuMemory(9999, 9999)).admitted())
                .as("already admitted")
                .isTrue();
        assertThat(node.usage().requested()).isEqualTo(new CpuMemory(4000, 1024));

        assertThat(node.release(id("a"))).isTrue();
        assertThat(node.release(id("a"))).isFalse();
        assertThat(node.usage().requested()).isEqualTo(CpuMemory.ZERO);
        assertThat(admit("b", new CpuMemory(4000, 1024)).admitted()).isTrue();
    }

    @Test
    void anUpdateThatDoesNotFitIsRefusedAndTheShareKept() {
        admit("a", new CpuMemory(1000, 100));
        admit("b", new CpuMemory(1000, 100));

        Decision grown = resize("a", new CpuMemory(1_000_000, 10_000_000));

        assertThat(grown.admitted()).isFalse();
        assertThat(grown.reason()).isEqualTo("OutOfcpu");
        assertThat(grown.message())
                .isEqualTo("The node cannot fit the allocation's new requests, so it runs on as it was: requested"
                        + " 1000000 millicores of CPU, 3000 free of 4000 allocatable; requested 10000000 MB of memory,"
                        + " 924 free of 1024 allocatable");
        assertThat(node.usage().requested()).as("its share as it was").isEqualTo(new CpuMemory(2000, 200));
        assertThat(node.usage().free()).isEqualTo(new CpuMemory(2000, 824));
        assertThat(node.refusals()).isEqualTo(Map.of("OutOfcpu", 1L));
        assertThat(admit("c", new CpuMemory(2000, 824)).admitted())
                .as("the rest is still free")
                .isTrue();
    }

    @Test
    void anUpdateThatFitsWithItsOwnShareGivenBackOrShrinksIsAdmitted() {
        admit("a", new CpuMemory(1000, 100));
        admit("b", new CpuMemory(2000, 100));

        assertThat(resize("a", new CpuMemory(2000, 924)).admitted())
                .as("exactly what is free with its own share back")
                .isTrue();
        assertThat(node.usage().free()).isEqualTo(CpuMemory.ZERO);
        assertThat(resize("a", new CpuMemory(2001, 924)).reason()).isEqualTo("OutOfcpu");
        assertThat(resize("a", new CpuMemory(500, 10)).admitted()).isTrue();
        assertThat(node.usage().requested()).isEqualTo(new CpuMemory(2500, 110));
        assertThat(resize("unknown", new CpuMemory(1, 1)).admitted())
                .as("one that holds no share is not admitted again")
                .isTrue();
        assertThat(node.holds(id("unknown"))).isFalse();
    }

    @Test
    void aShrinkingUpdateFitsEvenAnOvercommittedNode() {
        node.force(id("restored"), new CpuMemory(5000, 2048));
        assertThat(resize("restored", new CpuMemory(4500, 2048)).admitted()).isTrue();
        assertThat(resize("restored", new CpuMemory(4600, 2048)).reason())
                .as("growing beyond what is free is not")
                .isEqualTo("OutOfcpu");
        assertThat(node.usage().requested()).isEqualTo(new CpuMemory(4500, 2048));
    }

    @Test
    void theFiguresBecomeNodeAnnotations() {
        admit("a", new CpuMemory(1000, 24));
        assertThat(node.usage().annotations())
                .containsExactly(
                        Map.entry("drover.dev/allocatable-cpu-millis", "4000"),
                        Map.entry("drover.dev/allocatable-memory-mb", "1024"),
                        Map.entry("drover.dev/requested-cpu-millis", "1000"),
                        Map.entry("drover.dev/requested-memory-mb", "24"),
                        Map.entry("drover.dev/free-cpu-millis", "3000"),
                        Map.entry("drover.dev/free-memory-mb", "1000"));
    }

    @Test
    void negativeAllocatableIsRefused() {
        assertThatThrownBy(() -> new NodeAdmission(new CpuMemory(-1, 0))).isInstanceOf(IllegalArgumentException.class);
    }

    static Task task(String name, Integer cpu, Integer memory) {
        Task t = new Task();
        t.setName(name);
        if (cpu != null || memory != null) {
            Resources r = new Resources();
            r.setCpuMillis(cpu);
            r.setMemoryMB(memory);
            t.setResources(r);
        }
        return t;
    }

    @Test
    void anAllocationRequestsTheSumOfItsTasksAndNothingWhenCreatedStopped() {
        AllocationSpec spec = new AllocationSpec();
        List<Task> tasks = new ArrayList<>(
                List.of(task("a", 500, 256), task("b", null, 128), task("c", 250, null), task("d", null, null)));
        spec.setTasks(tasks);
        assertThat(CpuMemory.requestsOf(spec)).isEqualTo(new CpuMemory(750, 384));

        spec.setDesiredStatus(DesiredStatus.Stop);
        assertThat(CpuMemory.requestsOf(spec)).isEqualTo(CpuMemory.ZERO);
        assertThat(CpuMemory.requestsOf(null)).isEqualTo(CpuMemory.ZERO);
    }

    @Test
    void theNodesMemoryIsReadFromMeminfo() {
        assertThat(NodeCapacity.memTotalMB("MemTotal:       16318540 kB\nMemFree:  1 kB\n"))
                .contains(15936L);
        assertThat(NodeCapacity.memTotalMB("MemFree: 1 kB\n")).isEmpty();
        assertThat(NodeCapacity.memTotalMB("MemTotal: 99999999999999999999 kB\n"))
                .as("a number too long to be true is not read")
                .isEmpty();
        CpuMemory detected = NodeCapacity.detect();
        assertThat(detected.cpuMillis()).isEqualTo(Runtime.getRuntime().availableProcessors() * 1000L);
        assertThat(detected.memoryMB()).isPositive();
    }

    @Test
    void allocatableIsTheConfiguredAmountOrTheNodeLessTheReserveNeverBelowZero() {
        CpuMemory node8 = new CpuMemory(8000, 16000);
        CpuMemory reserved = new CpuMemory(100, 256);
        assertThat(NodeCapacity.allocatable(Optional.empty(), Optional.empty(), reserved, node8))
                .isEqualTo(new CpuMemory(7900, 15744));
        assertThat(NodeCapacity.allocatable(Optional.of(1000L), Optional.empty(), reserved, node8))
                .isEqualTo(new CpuMemory(1000, 15744));
        assertThat(NodeCapacity.allocatable(Optional.empty(), Optional.of(64L), new CpuMemory(9000, 0), node8))
                .isEqualTo(new CpuMemory(0, 64));
    }
}
