package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.allocwatcher.DiskClaimedException;
import dev.drover.allocwatcher.PreviousAllocations;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
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

    @Test
    void aDiskIsClaimedByOneSuccessorOnlyAndTheClaimIsKeptOnThePreviousAllocation() throws Exception {
        create("web-1");
        AllocId web1 = new AllocId("default", "web-1");
        PreviousAllocations.Claimant web2 = new PreviousAllocations.Claimant("web-2", "uid-2");
        previous.claimDisk(web1, web2);
        previous.claimDisk(web1, web2); // again, as after an agent restart: still its own
        assertThat(client.resources(Allocation.class)
                        .inNamespace("default")
                        .withName("web-1")
                        .get()
                        .getMetadata()
                        .getAnnotations())
                .containsEntry(ApiPreviousAllocations.CLAIM, "web-2/uid-2");

        assertThatThrownBy(() -> previous.claimDisk(web1, new PreviousAllocations.Claimant("web-3", "uid-3")))
                .isInstanceOf(DiskClaimedException.class)
                .hasMessage("allocation web-2 claimed the disk of web-1 first, and a disk goes to one successor only");
        // a new allocation with the first one's name is another successor
        assertThatThrownBy(() -> previous.claimDisk(web1, new PreviousAllocations.Claimant("web-2", "uid-2b")))
                .isInstanceOf(DiskClaimedException.class);
        // and a claim survives this agent: another agent (another node) reads the same
        try (ApiPreviousAllocations otherNode =
                new ApiPreviousAllocations(client, Duration.ofMillis(20), Duration.ofMillis(100))) {
            assertThatThrownBy(() -> otherNode.claimDisk(web1, new PreviousAllocations.Claimant("web-4", "uid-4")))
                    .isInstanceOf(DiskClaimedException.class);
            otherNode.claimDisk(web1, web2);
        }
    }

    @Test
    void theDiskOfAGoneAllocationCannotBeClaimed() {
        assertThatThrownBy(() -> previous.claimDisk(
                        new AllocId("default", "never-was"), new PreviousAllocations.Claimant("web-2", "uid-2")))
                .isNotInstanceOf(DiskClaimedException.class)
                .hasMessage("previous allocation default/never-was is gone, and its disk with it");
    }

    @Test
    void ofSuccessorsRacingForADiskExactlyOneWins() throws Exception {
        create("raced");
        AllocId raced = new AllocId("default", "raced");
        int racers = 8;
        CountDownLatch go = new CountDownLatch(1);
        List<String> winners = new CopyOnWriteArrayList<>();
        List<String> losers = new CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < racers; i++) {
            String name = "next-" + i;
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    go.await();
                    previous.claimDisk(raced, new PreviousAllocations.Claimant(name, "uid-" + name));
                    winners.add(name);
                } catch (DiskClaimedException e) {
                    losers.add(e.holder());
                } catch (Exception e) {
                    losers.add("failed: " + e);
                }
            }));
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertThat(winners).hasSize(1);
        assertThat(losers).hasSize(racers - 1).containsOnly(winners.getFirst());
    }
}
