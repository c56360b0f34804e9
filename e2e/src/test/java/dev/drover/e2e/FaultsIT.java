package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 9's fault tests, with the agent jar as a separate process on the local
 * cluster. CI runs smaller counts; {@code -Ddrover.faults.full=true} runs the
 * issue's (200 allocations, 10 kills; docs/BENCHMARKS.md).
 */
class FaultsIT {

    static final boolean FULL = Boolean.getBoolean("drover.faults.full");

    @TempDir
    Path dir;

    LocalApiServer server;
    AgentProcess agent;
    final List<Long> pidsToReap = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        // first the tasks (started by earlier runs of the agent too, so not all its descendants), so that closing
        // the agent finds their cgroups empty and removes them
        for (long pid : pidsToReap) {
            ProcessHandle.of(pid).ifPresent(p -> {
                p.destroyForcibly();
                p.onExit().join();
            });
        }
        if (agent != null) {
            agent.close();
        }
        if (server != null) {
            server.close();
        }
    }

    AgentProcess agent(String log, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of(
                "--kubeconfig",
                AgentKubeconfig.forNode(server, "local", dir).toString(),
                "--node",
                "local",
                "--data-dir",
                dir.resolve("data").toString(),
                "--metrics-port",
                "-1",
                "--api-port",
                "0"));
        args.addAll(List.of(extra));
        return new AgentProcess(
                Files.createDirectories(Path.of("target", "agent-logs")).resolve(log), args.toArray(String[]::new));
    }

    KubernetesClient client() {
        return server.client();
    }

    Allocation get(String name) {
        return client().resources(Allocation.class)
                .inNamespace("default")
                .withName(name)
                .get();
    }

    static Allocation allocation(String name, AllocationType type, String driver, Map<String, Object> config) {
        Allocation a = new Allocation();
        a.setMetadata(
                new ObjectMetaBuilder().withName(name).withNamespace("default").build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("local");
        spec.setType(type);
        Task t = new Task();
        t.setName("main");
        t.setDriver(driver);
        t.setConfig(config);
        t.setKillTimeout("2s");
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return a;
    }

    /**
     * SIGKILL at random moments while allocations are created and deleted: every time, the agent opens its store
     * and comes back; afterwards every allocation still in the API runs exactly one process (each start writes
     * its PID to a file, so a second start shows), every deleted one runs none, and nothing was restarted.
     */
    @Test
    void agentKilledAtRandomDuringChurnLosesNothingAndRunsNothingTwice() throws Exception {
        int total = FULL ? 200 : 40;
        int kills = FULL ? 10 : 3;
        long seed = System.nanoTime();
        Random random = new Random(seed);
        String context = "seed " + seed + " (" + total + " allocations, " + kills + " kills)";
        Path starts = Files.createDirectories(dir.resolve("starts"));
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        agent = agent("faults-churn.log", "--enable-raw-exec").start();

        Set<String> live = ConcurrentHashMap.newKeySet();
        Set<String> deleted = ConcurrentHashMap.newKeySet();
        long churnMillis = kills * 1_500L;
        Thread churn = Thread.ofPlatform().name("churn").start(() -> {
            Random r = new Random(seed + 1);
            for (int i = 0; i < total; i++) {
                String name = "churn-" + i;
                client().resource(allocation(
                                name,
                                AllocationType.Service,
                                "raw_exec",
                                Map.of(
                                        "command",
                                        "/bin/sh",
                                        "args",
                                        List.of("-c", "echo $$ >> " + starts.resolve(name) + "; exec sleep 600"))))
                        .create();
                live.add(name);
                if (r.nextInt(4) == 0) {
                    String victim = live.stream()
                            .skip(r.nextInt(live.size()))
                            .findFirst()
                            .orElseThrow();
                    client().resources(Allocation.class)
                            .inNamespace("default")
                            .withName(victim)
                            .delete();
                    live.remove(victim);
                    deleted.add(victim);
                }
                try {
                    Thread.sleep(churnMillis / total);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        for (int k = 0; k < kills; k++) {
            Thread.sleep(200 + random.nextInt(1_300));
            agent.kill();
            Thread.sleep(random.nextInt(500));
            agent.start(); // waits for "is ready": the store opened and everything stored was restored
        }
        churn.join();

        await(context)
                .atMost(Duration.ofSeconds(FULL ? 180 : 90))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    List<Allocation> all = client().resources(Allocation.class)
                            .inNamespace("default")
                            .list()
                            .getItems();
                    return all.size() == live.size()
                            && all.stream()
                                    .allMatch(a -> a.getStatus() != null
                                            && a.getStatus().getClientStatus() == ClientStatus.Running);
                });
        for (String name : live) {
            List<String> pids = Files.readAllLines(starts.resolve(name));
            pids.forEach(p -> pidsToReap.add(Long.parseLong(p.strip())));
            assertThat(pids).as(name + ": one start, " + context).hasSize(1);
            assertThat(ProcessHandle.of(Long.parseLong(pids.getFirst().strip())).map(ProcessHandle::isAlive))
                    .as(name + " runs, " + context)
                    .contains(true);
            assertThat(get(name).getStatus().getRestarts())
                    .as(name + " restarts, " + context)
                    .isZero();
        }
        for (String name : deleted) {
            Path file = starts.resolve(name);
            List<String> pids = Files.exists(file) ? Files.readAllLines(file) : List.of();
            pids.forEach(p -> pidsToReap.add(Long.parseLong(p.strip())));
            assertThat(pids)
                    .as(name + " (deleted) started at most once, " + context)
                    .hasSizeLessThanOrEqualTo(1);
            await(name + " (deleted) is stopped, " + context)
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> pids.stream()
                            .noneMatch(p -> ProcessHandle.of(Long.parseLong(p.strip()))
                                    .map(ProcessHandle::isAlive)
                                    .orElse(false)));
        }
        assertThat(agent.log()).as("the last agent's log").doesNotContain("cannot restore", "ERROR");
    }

    /**
     * The API server goes away for 30 s and comes back with its objects: the agent reconnects, nothing restarts,
     * and what happened meanwhile (a batch task finishing) reaches the API.
     */
    @Test
    void apiServerOutageIsRiddenOutAndStatusesCatchUp() throws Exception {
        long outageSeconds = Long.getLong("drover.faults.outageSeconds", 30);
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        agent = agent("faults-outage.log").start();
        client().resource(allocation("steady", AllocationType.Service, "mock", Map.of("runFor", "1h")))
                .create();
        client().resource(allocation(
                        "finishes", AllocationType.Batch, "mock", Map.of("runFor", (outageSeconds / 2 + 2) + "s")))
                .create();
        await().atMost(Duration.ofSeconds(30)).until(() -> running("steady") && running("finishes"));

        server.stopServing();
        Thread.sleep(TimeUnit.SECONDS.toMillis(outageSeconds));
        assertThat(agent.alive()).as("the agent rides out the outage").isTrue();
        server.startServing();

        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> get("finishes").getStatus().getClientStatus() == ClientStatus.Complete);
        Allocation steady = get("steady");
        assertThat(steady.getStatus().getClientStatus()).isEqualTo(ClientStatus.Running);
        assertThat(steady.getStatus().getRestarts()).isZero();
        TaskState main = steady.getStatus().getTaskStates().get("main");
        assertThat(main.getEvents().stream().filter(e -> e.getType() == TaskEventType.Started))
                .hasSize(1);

        client().resource(allocation("after", AllocationType.Service, "mock", Map.of("runFor", "1h")))
                .create();
        await().atMost(Duration.ofSeconds(30)).until(() -> running("after"));
        assertThat(agent.alive()).isTrue();
    }

    boolean running(String name) {
        Allocation a = get(name);
        return a != null && a.getStatus() != null && a.getStatus().getClientStatus() == ClientStatus.Running;
    }
}
