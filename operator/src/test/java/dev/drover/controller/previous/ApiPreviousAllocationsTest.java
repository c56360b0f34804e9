package dev.drover.controller.previous;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.state.AllocId;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Waiting for a previous allocation that ran on another node, through the API server. */
class ApiPreviousAllocationsTest {

    MockApi api;
    KubernetesClient client;
    ApiPreviousAllocations previous;

    @BeforeEach
    void start() throws Exception {
        api = new MockApi();
        client = api.client();
        previous = new ApiPreviousAllocations(client, Duration.ofMillis(20), Duration.ofMillis(100));
    }

    @AfterEach
    void stop() {
        previous.close();
        api.close();
    }

    Allocation create(String name) {
        Allocation a = new Allocation();
        a.setMetadata(
                new ObjectMetaBuilder().withName(name).withNamespace("default").build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("node-b");
        Task t = new Task();
        t.setName("main");
        t.setDriver("mock");
        t.setConfig(Map.of());
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return client.resource(a).create();
    }

    void setStatus(String name, ClientStatus status) {
        Allocation a = client.resources(Allocation.class)
                .inNamespace("default")
                .withName(name)
                .get();
        AllocationStatus s = new AllocationStatus();
        s.setClientStatus(status);
        a.setStatus(s);
        client.resource(a).updateStatus();
    }

    @Test
    void completesWhenThePreviousAllocationBecomesTerminal() throws Exception {
        create("old");
        setStatus("old", ClientStatus.Running);
        CompletableFuture<Void> done = previous.terminal(new AllocId("default", "old"));
        Thread.sleep(300);
        assertThat(done).as("still running on its node").isNotDone();
        setStatus("old", ClientStatus.Complete);
        await().atMost(Duration.ofSeconds(5)).until(done::isDone);
    }

    @Test
    void completesAtOnceWhenThePreviousAllocationIsGone() {
        CompletableFuture<Void> done = previous.terminal(new AllocId("default", "never-existed"));
        await().atMost(Duration.ofSeconds(5)).until(done::isDone);
    }

    @Test
    void cancellingTheWaitStopsItsThread() {
        create("slow");
        CompletableFuture<Void> done = previous.terminal(new AllocId("default", "slow"));
        assertThat(previous.waiting()).isEqualTo(1);
        done.cancel(false);
        await().atMost(Duration.ofSeconds(5)).until(() -> previous.waiting() == 0);
    }
}
