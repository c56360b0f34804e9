package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.controller.AllocationReconciler;
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
 * fabric8's mock server: the finalizer added and removed (by the agent, one small JSON patch each; none to add where
 * the chart's MutatingAdmissionPolicy put it there at create), a status write or two (a {@code Pending} that lasted past
 * the pending delay, then {@code Running}), and the Events: by default ({@code events.taskEvents: folded}) one for
 * the start of every task, with {@code all} one for each task event, with {@code notable} none for an ordinary start
 * and stop, within issue 24's budget of 4.
 */
class AllocationApiWritesTest {

    static final String ALLOCATION = "/apis/drover.dev/v1alpha1/namespaces/default/allocations";

    @TempDir
    Path data;

    MockApi api;
    KubernetesClient client;
    Agent agent;

    @BeforeEach
    void mock() throws Exception {
        api = new MockApi();
        client = api.client();
    }

    void start(String configYaml) throws Exception {
        Path config = data.resolveSibling(data.getFileName() + "-agent.yaml");
        Files.writeString(config, configYaml);
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
    void byDefaultAnOrdinaryStartIsOneEventNamingEveryTask() throws Exception {
        start("{}\n");
        List<String> agents = life();
        assertThat(client.v1().events().inNamespace("default").list().getItems())
                .extracting(e -> e.getType() + " " + e.getReason() + " " + e.getMessage())
                .as("kubectl describe alloc shows when it started")
                .containsExactly("Normal Started Received, TaskSetup (2 times), Started: tasks main, sidecar");
        assertThat(agents)
                .filteredOn(w -> w.contains("/events"))
                .as("one Event: " + agents)
                .hasSize(1);
        assertStatusAndFinalizer(agents, 2);
    }

    @Test
    void allRecordsEachTaskEventAsAnEvent() throws Exception {
        start("events: {taskEvents: all}\n");
        List<String> agents = life();
        assertThat(client.v1().events().inNamespace("default").list().getItems())
                .extracting(e -> e.getReason() + " "
                        + e.getMessage().substring(0, e.getMessage().indexOf(':')))
                .as("kubectl describe alloc shows the history")
                .contains(
                        "Received Task main",
                        "TaskSetup Task main",
                        "Started Task main",
                        "Received Task sidecar",
                        "TaskSetup Task sidecar",
                        "Started Task sidecar");
        assertThat(agents)
                .filteredOn(w -> w.startsWith("POST /api/v1/namespaces/default/events"))
                .as("an Event each: " + agents)
                .hasSizeGreaterThanOrEqualTo(6);
        assertStatusAndFinalizer(agents, 2);
    }

    @Test
    void notableCostsTheFinalizerTwiceAndAStatusWriteOrTwo() throws Exception {
        start("events: {taskEvents: notable}\n");
        List<String> agents = life();
        assertThat(agents)
                .as("the agent's writes for the allocation")
                .filteredOn(w -> w.contains("/events"))
                .isEmpty();
        assertStatusAndFinalizer(agents, 2);
        assertThat(agents).as("issue 24's budget").hasSizeLessThanOrEqualTo(4);
    }

    @Test
    void anAllocationCreatedWithTheFinalizerCostsOnlyItsRemoval() throws Exception {
        start("events: {taskEvents: notable}\n");
        List<String> agents = life(AllocationReconciler.FINALIZER);
        assertStatusAndFinalizer(agents, 1);
        assertThat(agents.getLast())
                .as("the finalizer's removal, after the destroy")
                .startsWith("PATCH " + ALLOCATION + "/life");
    }

    /**
     * An allocation of two tasks created (with {@code finalizers}, as a mutating admission policy leaves it), Running,
     * deleted and gone: the agent's writes for it.
     */
    private List<String> life(String... finalizers) throws Exception {
        Allocation a = AgentTest.alloc("life", "node-a", Map.of("runFor", "1h"));
        a.getMetadata().setFinalizers(List.of(finalizers));
        Task sidecar = new Task();
        sidecar.setName("sidecar");
        sidecar.setDriver("mock");
        sidecar.setConfig(Map.of("runFor", "1h"));
        a.getSpec().setTasks(List.of(a.getSpec().getTasks().getFirst(), sidecar));
        api.takeWrites(); // the agent's start (its Node): not the allocation's
        client.resource(a).create();
        // JOSDK's own threads are not what is counted here: its retry of the finalizer's removal, which the mock
        // server answers with no body, once threw (a timer scheduled twice) and Awaitility failed the test with it
        await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(20)).until(() -> {
            Allocation now = client.resource(a).get();
            return now.getStatus() != null && now.getStatus().getClientStatus() == ClientStatus.Running;
        });
        List<String> writes = new ArrayList<>(quiet());
        client.resource(a).delete();
        await().dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(20))
                .until(() -> client.resource(a).get() == null);
        writes.addAll(quiet());
        return writes.stream()
                .filter(w -> !w.equals("POST " + ALLOCATION) && !w.startsWith("DELETE " + ALLOCATION + "/life"))
                .filter(w -> w.contains("/allocations/life") || w.contains("/events"))
                .toList();
    }

    private static void assertStatusAndFinalizer(List<String> agents, int finalizerWrites) {
        assertThat(agents)
                .filteredOn(w -> w.startsWith("PATCH " + ALLOCATION + "/life/status")
                        || w.startsWith("PUT " + ALLOCATION + "/life/status"))
                .as("Running, and before it Pending if that lasted past the pending delay: " + agents)
                .hasSizeBetween(1, 2);
        assertThat(agents)
                .filteredOn(w -> w.matches("[A-Z]+ " + ALLOCATION + "/life(\\?.*)?"))
                .as("the finalizer added (unless it was there) and removed: " + agents)
                .hasSize(finalizerWrites);
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
