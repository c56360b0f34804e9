package dev.drover.allocrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.NetworkMode;
import dev.drover.api.v1alpha1.NetworkStatus;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.driver.TaskConfig;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookContexts;
import dev.drover.taskrunner.TaskHookException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class NetworkHookTest {

    private static final AllocId ID = new AllocId("shop", "web");

    private final StateDB db = StateStores.inMemory();
    private final List<AllocNetwork> published = new ArrayList<>();

    /** A NetworkSetup that records its calls, or fails its set-up as a plugin would. */
    private static final class Recording implements NetworkSetup {
        final List<String> calls = new ArrayList<>();
        String failure;

        @Override
        public String nodeAddress() {
            return "10.0.0.7";
        }

        @Override
        public Map<String, Integer> hostPorts(AllocId id) {
            return Map.of("http", 20005);
        }

        @Override
        public Attached setUp(AllocId id, NetworkMode mode, List<NetworkStatus.PortStatus> ports) throws Exception {
            calls.add("setUp " + mode.apiName() + " " + ports);
            if (failure != null) {
                throw new java.io.IOException(failure);
            }
            return new Attached(Path.of("/var/lib/drover/netns/x"), "172.26.64.9", "{\"made\":1}");
        }

        @Override
        public Attached reattach(AllocId id, String stored) {
            calls.add("reattach " + stored);
            return new Attached(Path.of("/var/lib/drover/netns/x"), "172.26.64.9", stored);
        }

        @Override
        public void tearDown(AllocId id, String stored) {
            calls.add("tearDown " + stored);
        }
    }

    @AfterEach
    void close() {
        db.close();
    }

    private static Allocation alloc(String network) {
        return Serialization.unmarshal("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: web, namespace: shop}
                spec:
                  nodeName: n
                  network: %s
                  tasks: [{name: main, driver: exec}]
                """.formatted(network), Allocation.class);
    }

    private AllocHookContext ctx(Allocation a) {
        return new AllocHookContext(
                ID,
                () -> a,
                null,
                Path.of("/data"),
                db,
                java.time.Clock.systemUTC(),
                () -> false,
                e -> {},
                List::of,
                false,
                (reason, message) -> {});
    }

    private static TaskHookContext start(Allocation a) {
        TaskConfig template = new TaskConfig(
                "shop",
                "web",
                "main",
                Map.of(),
                Map.of(),
                Path.of("/a"),
                Path.of("/t"),
                Path.of("/l"),
                Path.of("/s"),
                null,
                null);
        return TaskHookContexts.of(ID, a.getSpec().getTasks().getFirst(), a.getSpec(), template);
    }

    @Test
    void bridgeNetworkIsSetUpAtTheFirstStartStoredLentAndTornDownOnce() throws Exception {
        Recording setup = new Recording();
        NetworkHook hook = new NetworkHook(setup, ID, db, published::add);
        Allocation a = alloc("{mode: bridge, ports: [{name: http, to: 8080}]}");
        assertThat(hook.prerun(ctx(a))).isTrue();
        assertThat(setup.calls).as("nothing is made before a task starts").isEmpty();

        TaskHookContext first = start(a);
        hook.prestart(first);
        hook.prestart(start(a));

        assertThat(setup.calls).containsExactly("setUp bridge [PortStatus[name=http, hostPort=20005, to=8080]]");
        assertThat(TaskHookContexts.taskConfig(first).attachments().networkNamespace())
                .isEqualTo(Path.of("/var/lib/drover/netns/x"));
        assertThat(first.env())
                .containsEntry("DROVER_HOST_PORT_HTTP", "20005")
                .containsEntry("DROVER_IP_HTTP", "10.0.0.7")
                .containsEntry("DROVER_ADDR_HTTP", "10.0.0.7:20005");
        assertThat(first.env()).containsEntry("DROVER_PORT_HTTP", "8080");
        assertThat(db.getNetwork(ID)).contains("{\"made\":1}");
        assertThat(published.getLast().status())
                .isEqualTo(new NetworkStatus(
                        NetworkMode.BRIDGE, "172.26.64.9", List.of(new NetworkStatus.PortStatus("http", 20005, 8080))));
        assertThat(hook.checkAddress("http")).contains(new InetSocketAddress("172.26.64.9", 8080));

        hook.postrun(ctx(a));
        hook.destroy(ctx(a));
        assertThat(setup.calls)
                .containsExactly(
                        "setUp bridge [PortStatus[name=http, hostPort=20005, to=8080]]", "tearDown {\"made\":1}");
        assertThat(db.getNetwork(ID)).contains("");
        assertThat(published.getLast().status().getIp())
                .as("no address once torn down")
                .isNull();
    }

    @Test
    void failedSetUpIsASetupFailureNamingThePluginsError() {
        Recording setup = new Recording();
        setup.failure = "the CNI plugin bridge failed: failed to allocate for range 0: no IP addresses available";
        NetworkHook hook = new NetworkHook(setup, ID, db, published::add);
        Allocation a = alloc("{mode: bridge}");

        assertThatThrownBy(() -> hook.prestart(start(a)))
                .isInstanceOfSatisfying(
                        TaskHookException.class, e -> assertThat(e.eventType()).isEqualTo(TaskEventType.SetupFailure))
                .hasMessage("cannot set up the allocation's bridge network: the CNI plugin bridge failed: failed to"
                        + " allocate for range 0: no IP addresses available");
        assertThat(db.getNetwork(ID)).isEmpty();
    }

    @Test
    void restartedAgentChecksTheStoredNetworkInsteadOfMakingAnother() throws Exception {
        db.putNetwork(ID, "{\"made\":1}");
        Recording setup = new Recording();
        NetworkHook hook = new NetworkHook(setup, ID, db, published::add);
        Allocation a = alloc("{mode: none}");

        hook.prerun(ctx(a));
        hook.prestart(start(a));

        assertThat(setup.calls).containsExactly("reattach {\"made\":1}");
    }

    @Test
    void hostNetworkMakesNothingAndTellsTheNodesPorts() throws Exception {
        Recording setup = new Recording();
        NetworkHook hook = new NetworkHook(setup, ID, db, published::add);
        Allocation a = alloc("{ports: [{name: http}]}");
        hook.prerun(ctx(a));
        TaskHookContext start = start(a);
        start.env().put("DROVER_PORT_HTTP", "9999"); // the task's own env, put by the env hook before this one
        hook.prestart(start);

        assertThat(setup.calls).isEmpty();
        assertThat(TaskHookContexts.taskConfig(start).attachments().networkNamespace())
                .isNull();
        assertThat(start.env()).containsEntry("DROVER_HOST_PORT_HTTP", "20005");
        assertThat(start.env()).as("the task's own value stays").containsEntry("DROVER_PORT_HTTP", "9999");
        assertThat(hook.checkAddress("http")).contains(new InetSocketAddress("127.0.0.1", 20005));
        assertThat(published.getLast().status().getIp()).isEqualTo("10.0.0.7");
    }
}
