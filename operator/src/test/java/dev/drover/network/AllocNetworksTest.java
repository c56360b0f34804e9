package dev.drover.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real CNI reference plugins, run in a node namespace each test makes ({@link NodeFixture}). */
class AllocNetworksTest {

    @TempDir
    Path tmp;

    private NodeFixture node;

    @BeforeEach
    void node() throws Exception {
        node = new NodeFixture(tmp, BridgeSettings.DEFAULT);
    }

    @AfterEach
    void removeNode() throws Exception {
        node.close();
    }

    @Test
    void anAllocationGetsAnAddressInTheSubnetAndTwoGetDistinctOnes() throws Exception {
        AttachedNetwork one = node.setUp("alloc-one", NetworkMode.BRIDGE);
        AttachedNetwork two = node.setUp("alloc-two", NetworkMode.BRIDGE);

        assertThat(one.ip()).startsWith("172.26.").isNotEqualTo(two.ip());
        assertThat(two.ip()).startsWith("172.26.");
        assertThat(one.netns())
                .isEqualTo(node.dataDir.resolve("netns/alloc-one").toRealPath().toString());
        assertThat(Nodes.run(Path.of(one.netns()), "ip", "-o", "-4", "addr", "show", "dev", "eth0"))
                .contains("inet " + one.ip() + "/20");
        assertThat(node.leases()).containsExactlyInAnyOrder(one.ip(), two.ip());
    }

    @Test
    void eachHostPortReachesItsOwnAllocationsServer() throws Exception {
        AttachedNetwork one = node.setUp("alloc-one", NetworkMode.BRIDGE, new PortMapping("http", 20001, 8080));
        AttachedNetwork two = node.setUp("alloc-two", NetworkMode.BRIDGE, new PortMapping("http", 20002, 8080));
        node.serve(one, "served by one\n");
        node.serve(two, "served by two\n");

        assertThat(node.curl("http://127.0.0.1:20001/")).isEqualTo("served by one\n");
        assertThat(node.curl("http://127.0.0.1:20002/")).isEqualTo("served by two\n");
        assertThat(node.curl("http://" + one.ip() + ":8080/")).isEqualTo("served by one\n");
        assertThat(node.curl("http://" + two.ip() + ":8080/")).isEqualTo("served by two\n");
    }

    @Test
    void noneHasOnlyItsLoopbackUp() throws Exception {
        AttachedNetwork none = node.setUp("alloc-none", NetworkMode.NONE);

        assertThat(none.ip()).isNull();
        String links = Nodes.run(Path.of(none.netns()), "ip", "-o", "link").strip();
        assertThat(links.lines()).singleElement().satisfies(l -> assertThat(l).startsWith("1: lo: <LOOPBACK,UP"));
        assertThat(node.leases()).isEmpty();
        assertThat(node.inNode("ip", "-o", "link")).doesNotContain("drover0");
    }

    @Test
    void hostMakesNothing() throws Exception {
        AttachedNetwork host = node.setUp("alloc-host", NetworkMode.HOST);

        assertThat(host).isEqualTo(AttachedNetwork.HOST);
        assertThat(node.dataDir.resolve("netns")).isEmptyDirectory();
        assertThat(node.networks.tearDown(host)).isEmpty();
    }

    @Test
    void teardownLeavesNoVethRuleLeaseOrNamespace() throws Exception {
        AttachedNetwork a = node.setUp("alloc-gone", NetworkMode.BRIDGE, new PortMapping("http", 20001, 8080));
        assertThat(node.inNode("iptables-save")).contains("alloc-gone");
        assertThat(node.inNode("ip", "-o", "link")).contains("veth");

        assertThat(node.networks.tearDown(a)).isEmpty();

        assertLeftNothing("alloc-gone");
        assertThat(node.networks.tearDown(a)).as("a second teardown").isEmpty();
    }

    @Test
    void teardownWhenTheNamespaceIsGoneStillReleasesTheLeaseAndTheRules() throws Exception {
        AttachedNetwork a = node.setUp("alloc-lost", NetworkMode.BRIDGE, new PortMapping("http", 20001, 8080));
        NetNs.in(node.dataDir.resolve("netns")).remove(Path.of(a.netns())); // as a reboot would

        assertThat(node.networks.tearDown(a)).isEmpty();

        assertLeftNothing("alloc-lost");
    }

    @Test
    void teardownAfterARebootReleasesTheLease() throws Exception {
        AttachedNetwork a = node.setUp("alloc-boot", NetworkMode.BRIDGE, new PortMapping("http", 20001, 8080));
        NetNs.in(node.dataDir.resolve("netns")).remove(Path.of(a.netns()));
        node.inNode("iptables", "-t", "nat", "-F");
        node.inNode("iptables", "-t", "nat", "-X");

        assertThat(node.networks.tearDown(a)).isEmpty();

        assertLeftNothing("alloc-boot");
    }

    @Test
    void aSetupAfterACrashClearsWhatTheEarlierOneLeft() throws Exception {
        node.networks.setUp("alloc-crash", NetworkMode.BRIDGE, List.of(new PortMapping("http", 20001, 8080)));
        // the agent died before storing that one: the next start sets up the same allocation again

        AttachedNetwork again = node.setUp("alloc-crash", NetworkMode.BRIDGE, new PortMapping("http", 20001, 8080));
        node.serve(again, "second try\n");

        assertThat(node.leases()).containsExactly(again.ip());
        assertThat(node.curl("http://127.0.0.1:20001/")).isEqualTo("second try\n");
        assertThat(node.inNode("ip", "-o", "link").lines().filter(l -> l.contains("veth")))
                .hasSize(1);
    }

    @Test
    void aFailedAddThrowsNamingThePluginAndLeavesNothing() throws Exception {
        // host-local cannot keep leases where a file stands in for its directory; bridge has made the veth by then
        Files.createDirectories(node.dataDir.resolve("cni"));
        Files.writeString(node.dataDir.resolve("cni/networks"), "not a directory");

        assertThatThrownBy(() -> node.networks.setUp(
                        "alloc-fail", NetworkMode.BRIDGE, List.of(new PortMapping("http", 20001, 8080))))
                .isInstanceOfSatisfying(
                        CniException.class, e -> assertThat(e.plugin()).isEqualTo("bridge"))
                .hasMessageStartingWith("the CNI plugin bridge failed ADD: ")
                .hasMessageContaining("not a directory");

        assertThat(node.dataDir.resolve("netns/alloc-fail")).doesNotExist();
        assertThat(node.inNode("ip", "-o", "link")).doesNotContain("veth");
        assertThat(node.inNode("iptables-save")).doesNotContain("alloc-fail");
    }

    @Test
    void checkPassesOnALiveOneAndFailsOnceItsVethIsGone() throws Exception {
        AttachedNetwork a = node.setUp("alloc-check", NetworkMode.BRIDGE, new PortMapping("http", 20001, 8080));
        AttachedNetwork none = node.setUp("alloc-lo", NetworkMode.NONE);
        node.networks.check(a);
        node.networks.check(none);

        Nodes.run(Path.of(a.netns()), "ip", "link", "del", "eth0");

        assertThatThrownBy(() -> node.networks.check(a))
                .isInstanceOf(CniException.class)
                .hasMessageContaining("the CNI plugin bridge failed CHECK")
                .hasMessageContaining("eth0");
        assertThat(node.networks.tearDown(a)).isEmpty();
        assertLeftNothing("alloc-check");
    }

    @Test
    void aRestoredNetworkIsCheckedAndTornDownFromItsStoredJson() throws Exception {
        AttachedNetwork a = node.setUp("alloc-stored", NetworkMode.BRIDGE, new PortMapping("http", 20001, 8080));
        String stored = CniPlugins.JSON.writeValueAsString(a);

        AttachedNetwork restored = CniPlugins.JSON.readValue(stored, AttachedNetwork.class);

        assertThat(stored).contains("\"mode\":\"bridge\"", "\"ip\":\"" + a.ip() + "\"");
        assertThat(restored).isEqualTo(a);
        node.networks.check(restored);
        NetNs.in(node.dataDir.resolve("netns")).remove(Path.of(a.netns()));
        assertThatThrownBy(() -> node.networks.check(restored)).hasMessageContaining("is gone");
    }

    @Test
    void aStoredNetworkNamingAnotherNamespaceIsRefused() throws Exception {
        AttachedNetwork forged = new AttachedNetwork(
                NetworkMode.BRIDGE, "alloc-x", tmp.resolve("nodes/node").toString(), null, List.of());

        assertThatThrownBy(() -> node.networks.check(forged)).hasMessageContaining("names the namespace");
        assertThat(node.networks.tearDown(forged)).singleElement().asString().contains("names the namespace");
        assertThat(node.nodes.exists(node.node)).isTrue();
    }

    @Test
    void manyAllocationsSetUpAtOnceGetDistinctAddresses() throws Exception {
        int n = 12;
        List<AttachedNetwork> made = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<AttachedNetwork>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int port = 21000 + i;
                String id = "alloc-" + i;
                Callable<AttachedNetwork> setUp =
                        () -> node.setUp(id, NetworkMode.BRIDGE, new PortMapping("http", port, 8080));
                futures.add(pool.submit(setUp));
            }
            for (Future<AttachedNetwork> f : futures) {
                made.add(f.get());
            }
        }
        assertThat(made.stream().map(AttachedNetwork::ip).distinct()).hasSize(n);
        assertThat(node.leases()).hasSize(n);
    }

    @Test
    void anAllocationIdThatIsNoPlainNameIsHashedForTheContainerId() {
        assertThat(AllocNetworks.containerId("0b6f7c1e-3d2a-4c5b-9e8f-112233445566"))
                .isEqualTo("0b6f7c1e-3d2a-4c5b-9e8f-112233445566");
        assertThat(AllocNetworks.containerId("ns/name; rm -rf /")).matches("h-[0-9a-f]{40}");
        assertThat(AllocNetworks.containerId("x".repeat(65))).matches("h-[0-9a-f]{40}");
        assertThat(AllocNetworks.containerId("ns/a")).isNotEqualTo(AllocNetworks.containerId("ns/b"));
    }

    private void assertLeftNothing(String containerId) throws Exception {
        assertThat(node.inNode("ip", "-o", "link")).doesNotContain("veth");
        assertThat(node.inNode("iptables-save")).doesNotContain(containerId);
        assertThat(node.leases()).isEmpty();
        assertThat(node.dataDir.resolve("netns/" + containerId)).doesNotExist();
    }
}
