package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What one allocation's life (created, Running, deleted and gone) costs the API server in write requests, counted by
 * fabric8's mock server: the finalizer added and removed, one status write, and no Event for an ordinary start and
 * stop. Issue 24's budget is 4.
 */
class AllocationApiWritesTest {

    static final String ALLOCATION = "/apis/drover.dev/v1alpha1/namespaces/default/allocations";

    @TempDir
    Path data;

    MockApi api;
    KubernetesClient client;
    Agent agent;

    @BeforeEach
    void start() throws Exception {
        api = new MockApi();
        client = api.client();
        Path config = data.resolveSibling(data.getFileName() + "-agent.yaml");
        // the default batch delay is 1 s; 3 s keeps a slow start on a loaded machine inside it
        Files.writeString(config, "statusWrites: {batchDelay: 3s, resync: 10s}\n");
        agent = Agent.start(
                AgentConfig.load(
                        List.of(
                                "--node",
                                "node-a",
                                "--data-dir",
                                data.toString(),
                                "--metrics-port",
                                "-1",
                                "--api-port",
                                "-1",
                                "--field-selector=false",
                                "--config",
                                config.toString()),
                        Map.of()),
                client);
    }

    @AfterEach
    void stop() {
        if (agent != null) {
            agent.close();
        }
        api.close();
    }

    @Test
    void anOrdinaryLifeOfTwoTasksCostsTheFinalizerTwiceAndOneStatusWrite() throws Exception {
        Allocation a = AgentTest.alloc("life", "node-a", Map.of("runFor", "1h"));
        Task sidecar = new Task();
        sidecar.setName("sidecar");
        sidecar.setDriver("mock");
        sidecar.setConfig(Map.of("runFor", "1h"));
        a.getSpec().setTasks(List.of(a.getSpec().getTasks().getFirst(), sidecar));
        api.takeWrites(); // the agent's start (its Node): not the allocation's
        client.resource(a).create();
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            Allocation now = client.resource(a).get();
            return now.getStatus() != null && now.getStatus().getClientStatus() == ClientStatus.Running;
        });
        List<String> writes = new ArrayList<>(quiet());
        client.resource(a).delete();
        await().atMost(Duration.ofSeconds(20)).until(() -> client.resource(a).get() == null);
        writes.addAll(quiet());

        List<String> agents = writes.stream()
                .filter(w -> !w.equals("POST " + ALLOCATION) && !w.startsWith("DELETE " + ALLOCATION + "/life"))
                .filter(w -> w.contains("/allocations/life") || w.contains("/events"))
                .toList();
        assertThat(agents)
                .as("the agent's writes for the allocation")
                .filteredOn(w -> w.contains("/events"))
                .isEmpty();
        assertThat(agents)
                .filteredOn(w -> w.startsWith("PATCH " + ALLOCATION + "/life/status")
                        || w.startsWith("PUT " + ALLOCATION + "/life/status"))
                .as("one status write, already Running: " + agents)
                .hasSize(1);
        assertThat(agents)
                .filteredOn(w -> w.matches("[A-Z]+ " + ALLOCATION + "/life(\\?.*)?"))
                .as("the finalizer added and removed: " + agents)
                .hasSize(2);
        assertThat(agents).hasSizeLessThanOrEqualTo(4);
    }

    /** The writes until none came for 4 s (past the batch delay), at most 30 s. */
    private List<String> quiet() throws InterruptedException {
        List<String> all = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        long quietSince = System.nanoTime();
        while (System.nanoTime() < deadline
                && System.nanoTime() - quietSince < Duration.ofSeconds(4).toNanos()) {
            Thread.sleep(100);
            List<String> more = api.takeWrites();
            if (!more.isEmpty()) {
                all.addAll(more);
                quietSince = System.nanoTime();
            }
        }
        return all;
    }
}
