package dev.drover.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.Port;
import dev.drover.state.AllocId;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodePortsTest {

    private static final AllocId A = new AllocId("ns", "a");
    private static final AllocId B = new AllocId("ns", "b");

    private static Port dynamic(String name) {
        return new Port(name, null, null);
    }

    private static Port fixed(String name, int port) {
        return new Port(name, port, null);
    }

    private static Map<String, Integer> admit(NodePorts ports, AllocId id, Port... asked) {
        NodePorts.Picks picks = ports.pick(id, List.of(asked));
        assertThat(picks.admitted()).as(picks.message()).isTrue();
        ports.take(id, picks.hostPorts());
        return picks.hostPorts();
    }

    @Test
    void staticPortHeldByAnotherAllocationIsAConflictNamingItsHolder() {
        NodePorts ports = new NodePorts(NodePorts.Range.DEFAULT);
        admit(ports, A, fixed("http", 8080));
        NodePorts.Picks refused = ports.pick(B, List.of(fixed("web", 8080)));
        assertThat(refused.admitted()).isFalse();
        assertThat(refused.reason()).isEqualTo("PortConflict");
        assertThat(refused.message())
                .isEqualTo("The node's port 8080 (port \"web\") is held by allocation ns/a; free it or give another"
                        + " static port");
        assertThat(refused.hostPorts()).isEmpty();
    }

    @Test
    void dynamicPortsAreDistinctAndNeverAnotherAllocationsStaticPort() {
        NodePorts ports = new NodePorts(new NodePorts.Range(30000, 30002));
        admit(ports, A, fixed("pinned", 30000));
        Map<String, Integer> b = admit(ports, B, dynamic("http"), dynamic("admin"));
        assertThat(b).containsExactly(Map.entry("http", 30001), Map.entry("admin", 30002));
        NodePorts.Picks none = ports.pick(new AllocId("ns", "c"), List.of(dynamic("x")));
        assertThat(none.reason()).isEqualTo("OutOfports");
        assertThat(none.message()).contains("30000-30002").contains("\"x\"");
    }

    @Test
    void freedPortIsReusableButNotHandedOutFirst() {
        NodePorts ports = new NodePorts(new NodePorts.Range(30000, 30009));
        assertThat(admit(ports, A, dynamic("http"))).containsEntry("http", 30000);
        ports.release(A);
        assertThat(ports.heldCount()).isZero();
        assertThat(admit(ports, B, dynamic("http"))).containsEntry("http", 30001);
        assertThat(admit(ports, A, fixed("again", 30000))).containsEntry("again", 30000);
    }

    @Test
    void pickingAgainKeepsTheDynamicPortsItHolds() {
        NodePorts ports = new NodePorts(new NodePorts.Range(30000, 30009));
        Map<String, Integer> first = admit(ports, A, dynamic("http"));
        admit(ports, B, dynamic("http"));
        assertThat(ports.pick(A, List.of(dynamic("http"), dynamic("metrics"))).hostPorts())
                .containsEntry("http", first.get("http"))
                .containsEntry("metrics", 30002);
    }

    @Test
    void takenPortsAreRestoredAsTheyWereStored() {
        NodePorts ports = new NodePorts(NodePorts.Range.DEFAULT);
        ports.take(A, Map.of("http", 25000));
        assertThat(ports.held(A)).containsExactly(Map.entry("http", 25000));
        assertThat(ports.pick(B, List.of(fixed("x", 25000))).reason()).isEqualTo("PortConflict");
    }

    @Test
    void rangeIsParsedAndCheckedWithAClearMessage() {
        assertThat(NodePorts.Range.parse("20000-32000")).isEqualTo(NodePorts.Range.DEFAULT);
        assertThatThrownBy(() -> NodePorts.Range.parse("32000-20000"))
                .hasMessage("dynamic ports 32000-20000 is not a range of ports (low-high, within 1-65535)");
        assertThatThrownBy(() -> NodePorts.Range.parse("lots"))
                .hasMessage("\"lots\" is not a port range; give low-high, e.g. 20000-32000");
    }
}
