package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.RestartPolicy;
import dev.drover.api.v1alpha1.Task;
import dev.drover.controller.AllocationReconciler;
import dev.drover.testing.LiveThreads;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent against fabric8's CRUD mock server, watching without a field selector (the mock cannot select on
 * custom resource fields): what the agent does with its own node's allocations, and that it leaves every
 * other node's alone anyway.
 */
class AgentTest {

    @TempDir
    Path data;

    MockApi api;
    KubernetesClient client;
    Agent agent;
    String extraConfig = "";

    @BeforeEach
    void start() throws Exception {
        api = new MockApi();
        client = api.client();
        agent = startAgent();
    }

    Agent startAgent(String... extraArgs) throws Exception {
        List<String> args = new ArrayList<>(List.of(
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
                writeConfig().toString()));
        args.addAll(List.of(extraArgs));
        return Agent.start(AgentConfig.load(args, Map.of()), client);
    }

    Path writeConfig() throws Exception {
        Path file = data.resolveSibling(data.getFileName() + "-agent.yaml");
        java.nio.file.Files.writeString(file, "statusWrites: {batchDelay: 100ms, resync: 2s}\n" + extraConfig);
        return file;
    }

    @AfterEach
    void stop() {
        if (agent != null) {
            agent.close();
        }
        api.close();
    }

    static Allocation alloc(String name, String node, Map<String, Object> config) {
        Allocation a = new Allocation();
        a.setMetadata(
                new ObjectMetaBuilder().withName(name).withNamespace("default").build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(node);
        Task t = new Task();
        t.setName("main");
        t.setDriver("mock");
        t.setConfig(config);
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return a;
    }

    Allocation get(String name) {
        return client.resources(Allocation.class)
                .inNamespace("default")
                .withName(name)
                .get();
    }

    @Test
    void anAgentToldToBookOnAPodThatIsNotThereDoesNotStartAndSaysWhy() {
        agent.close();
        agent = null;

        assertThatThrownBy(() ->
                        startAgent("--node-sharing", "resize", "--pod-name", "drover-x", "--pod-namespace", "drover"))
                .hasMessageContaining("the agent's Pod drover/drover-x does not exist");
    }

    /** The data dir holds the store (every allocation's env values) and every task's files: the agent's alone. */
    @Test
    void anExistingDataDirIsMadeTheAgentUsersOnlyAtStart() throws Exception {
        agent.close();
        java.nio.file.Files.setPosixFilePermissions(
                data, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        agent = startAgent();
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
                        java.nio.file.Files.getPosixFilePermissions(data)))
                .isEqualTo("rwx------");
    }

    @Test
    void runsItsNodesAllocationReportsStatusAndRecordsEvents() {
        client.resource(alloc("web", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("web").getStatus() != null
                        && get("web").getStatus().getClientStatus() == ClientStatus.Running);
        Allocation web = get("web");
        assertThat(web.getMetadata().getFinalizers()).containsExactly(AllocationReconciler.FINALIZER);
        assertThat(web.getStatus().getReady()).isEqualTo("1/1");
        assertThat(web.getStatus().getConditions()).anySatisfy(c -> {
            assertThat(c.getType()).isEqualTo("Ready");
            assertThat(c.getStatus()).isEqualTo("True");
        });
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(client.v1()
                                .events()
                                .inNamespace("default")
                                .list()
                                .getItems())
                        .extracting(Event::getReason)
                        .contains("Started"));
        Event started = client.v1().events().inNamespace("default").list().getItems().stream()
                .filter(e -> e.getReason().equals("Started"))
                .findFirst()
                .orElseThrow();
        assertThat(started.getMessage())
                .as("the start folded into one Event (events.taskEvents: folded)")
                .startsWith("Received, TaskSetup")
                .contains(", Started: task ");
        assertThat(started.getInvolvedObject().getUid())
                .isEqualTo(web.getMetadata().getUid());
        assertThat(started.getInvolvedObject().getKind()).isEqualTo("Allocation");
        assertThat(started.getType()).isEqualTo("Normal");
        assertThat(started.getMetadata().getName()).startsWith("web.");
    }

    @Test
    void anotherNodesAllocationGetsNoStatusAndNoFinalizerWhenTheWatchSendsEverything() throws Exception {
        client.resource(alloc("theirs", "node-b", Map.of("runFor", "1h"))).create();
        client.resource(alloc("ours", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(20)).until(() -> get("ours").getStatus() != null);
        Thread.sleep(500);
        Allocation theirs = get("theirs");
        assertThat(theirs.getStatus()).isNull();
        assertThat(theirs.getMetadata().getFinalizers()).isNullOrEmpty();
        assertThat(data.resolve("allocs/default/theirs")).doesNotExist();
    }

    /**
     * Item 17: an API server without the CRD's CEL rules lets {@code spec.nodeName} change. The old node's agent
     * kept running the tasks; now it destroys the allocation as if deleted, writes nothing more about it, and
     * leaves the finalizer to the new node's agent.
     */
    @Test
    void anAllocationMovedToAnotherNodeIsDestroyedHereAndKeepsItsFinalizer() throws Exception {
        client.resource(alloc("mover", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("mover").getStatus() != null
                        && get("mover").getStatus().getClientStatus() == ClientStatus.Running);
        assertThat(data.resolve("allocs/default/mover")).exists();
        // what the allocation's run still had to write (a later task event, batched) lands before the count is taken
        long[] seen = {-1};
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(600))
                .until(() -> {
                    long now = agent.statusWriter().writes();
                    boolean settled = now == seen[0];
                    seen[0] = now;
                    return settled;
                });
        long writes = seen[0];
        client.resources(Allocation.class)
                .inNamespace("default")
                .withName("mover")
                .edit(a -> {
                    a.getSpec().setNodeName("node-b");
                    return a;
                });
        await().atMost(Duration.ofSeconds(20))
                .until(() -> agent.controller().size() == 0
                        && !java.nio.file.Files.exists(data.resolve("allocs/default/mover")));
        Thread.sleep(500); // anything it would still write
        assertThat(agent.statusWriter().writes())
                .as("no status written for another node's allocation")
                .isEqualTo(writes);
        Allocation moved = get("mover");
        assertThat(moved.getMetadata().getFinalizers())
                .as("kept for node-b's agent")
                .containsExactly(AllocationReconciler.FINALIZER);
        assertThat(moved.getStatus().getClientStatus()).isEqualTo(ClientStatus.Running);
    }

    @Test
    void repeatedEventsUpdateOneKubernetesEvent() {
        Allocation a = alloc("flappy", "node-a", Map.of("runFor", "50ms", "exitCode", 1));
        RestartPolicy policy = new RestartPolicy();
        policy.setAttempts(3);
        policy.setInterval("10s");
        policy.setDelay("10ms");
        policy.setMode(dev.drover.api.v1alpha1.RestartMode.Fail);
        a.getSpec().setRestartPolicy(policy);
        client.resource(a).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("flappy").getStatus() != null
                        && get("flappy").getStatus().getClientStatus() == ClientStatus.Failed);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            List<Event> events =
                    client.v1().events().inNamespace("default").list().getItems();
            // each exit a Warning, which closes the fold before it: the three restarts fold alike
            assertThat(events)
                    .filteredOn(e ->
                            e.getReason().equals("Started") && e.getMessage().startsWith("Restarting, Started"))
                    .singleElement()
                    .satisfies(e -> assertThat(e.getCount()).isEqualTo(3));
            assertThat(events)
                    .filteredOn(e -> e.getReason().equals("Terminated"))
                    .singleElement()
                    .satisfies(e -> assertThat(e.getCount()).isEqualTo(4)); // first start and three restarts
        });
        List<Event> all = client.v1().events().inNamespace("default").list().getItems();
        assertThat(all)
                .filteredOn(e -> e.getReason().equals("NotRestarting"))
                .singleElement()
                .extracting(Event::getType)
                .isEqualTo("Warning");
        assertThat(get("flappy").getStatus().getRestarts()).isEqualTo(3);
    }

    /**
     * Item 30: a task failing at once with {@code delay: 0s} restarts about a hundred times a second, and each
     * restart was a status write or more and three Events. Writes are rate-limited per allocation; the status
     * written last still counts every restart.
     */
    @Test
    void aRestartStormCostsTheApiServerAFewWritesASecondAndItsStatusCountsEveryRestart() {
        Allocation a = alloc("storm", "node-a", Map.of("runFor", "1ms", "exitCode", 1));
        RestartPolicy policy = new RestartPolicy();
        policy.setAttempts(100);
        policy.setInterval("1h");
        policy.setDelay("0s");
        policy.setMode(dev.drover.api.v1alpha1.RestartMode.Fail);
        a.getSpec().setRestartPolicy(policy);
        long statusWrites = agent.statusWriter().writes();
        long events = agent.events().written();
        long start = System.nanoTime();
        client.resource(a).create();
        await().atMost(Duration.ofSeconds(60))
                .until(() -> get("storm").getStatus() != null
                        && get("storm").getStatus().getClientStatus() == ClientStatus.Failed);
        double seconds = (System.nanoTime() - start) / 1e9;
        assertThat(get("storm").getStatus().getRestarts()).isEqualTo(100);
        assertThat(agent.statusWriter().writes() - statusWrites)
                .as("status writes in %.1f s", seconds)
                .isLessThanOrEqualTo((long) (seconds * 4) + 2);
        assertThat(agent.events().written() - events)
                .as("Event writes in %.1f s", seconds)
                .isLessThanOrEqualTo(100 + (long) (seconds * 2) + 2);
        assertThat(agent.events().dropped())
                .as("the storm's events past its share are dropped")
                .isPositive();
    }

    @Test
    void anInvalidSpecIsFailedWithAConditionAndTheAgentCarriesOn() {
        Allocation bad = alloc("bad", "node-a", Map.of("runFor", "1h"));
        bad.getSpec().getTasks().getFirst().setKillTimeout("forever");
        client.resource(bad).create();
        client.resource(alloc("good", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("bad").getStatus() != null
                        && get("good").getStatus() != null
                        && get("good").getStatus().getClientStatus() == ClientStatus.Running);
        Allocation failed = get("bad");
        assertThat(failed.getStatus().getClientStatus()).isEqualTo(ClientStatus.Failed);
        assertThat(failed.getStatus().getConditions()).anySatisfy(c -> {
            assertThat(c.getType()).isEqualTo("SpecValid");
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getMessage()).contains("spec.tasks[0].killTimeout");
        });
        assertThat(data.resolve("allocs/default/bad")).doesNotExist();
    }

    @Test
    void deleteDestroysTheAllocationAndReleasesTheFinalizer() {
        client.resource(alloc("doomed", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("doomed").getStatus() != null
                        && get("doomed").getStatus().getClientStatus() == ClientStatus.Running);
        assertThat(data.resolve("allocs/default/doomed")).exists();
        client.resources(Allocation.class)
                .inNamespace("default")
                .withName("doomed")
                .delete();
        await().atMost(Duration.ofSeconds(20)).until(() -> get("doomed") == null);
        assertThat(data.resolve("allocs/default/doomed")).doesNotExist();
        assertThat(agent.controller().size()).isZero();
    }

    @Test
    void anAllocationGoneWhileTheAgentWasAwayIsDestroyedAtRestart() throws Exception {
        client.resource(alloc("kept", "node-a", Map.of("runFor", "1h"))).create();
        client.resource(alloc("removed", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> Set.of("kept", "removed").stream()
                        .allMatch(n -> get(n).getStatus() != null
                                && get(n).getStatus().getClientStatus() == ClientStatus.Running));
        agent.close();
        agent = null;
        // gone while the agent was away (its finalizer removed by hand)
        Allocation removed = get("removed");
        removed.getMetadata().setFinalizers(List.of());
        client.resource(removed).update();
        client.resources(Allocation.class)
                .inNamespace("default")
                .withName("removed")
                .delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> get("removed") == null);

        agent = startAgent();
        assertThat(data.resolve("allocs/default/removed")).doesNotExist();
        assertThat(data.resolve("allocs/default/kept")).exists();
        await().atMost(Duration.ofSeconds(10)).until(() -> agent.controller().size() == 1);
        assertThat(get("kept").getStatus().getTaskStates().get("main").getRestarts())
                .isZero();
    }

    /** From the first task's Received to its Started, as the agent's clock wrote them in status. */
    record Span(String name, java.time.Instant received, java.time.Instant started) {}

    Span span(String name) {
        var events = get(name).getStatus().getTaskStates().get("main").getEvents();
        java.util.function.Function<dev.drover.api.v1alpha1.TaskEventType, java.time.Instant> first =
                type -> events.stream()
                        .filter(e -> e.getType() == type)
                        .map(e -> dev.drover.api.Timestamps.parse(e.getTime()))
                        .findFirst()
                        .orElseThrow();
        return new Span(
                name,
                first.apply(dev.drover.api.v1alpha1.TaskEventType.Received),
                first.apply(dev.drover.api.v1alpha1.TaskEventType.Started));
    }

    @Test
    void aBurstIsTakenOnAFewAtATimeAndEveryAllocationRuns() throws Exception {
        agent.close();
        extraConfig = "concurrentStarts: 2\n";
        agent = startAgent();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            names.add("burst-" + i);
            client.resource(alloc("burst-" + i, "node-a", Map.of("runFor", "1h", "startBlockFor", "300ms")))
                    .create();
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> agent.controller().waitingToStart() > 0);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> names.stream()
                        .allMatch(n -> get(n).getStatus() != null
                                && get(n).getStatus().getClientStatus() == ClientStatus.Running));
        List<Span> spans = names.stream().map(this::span).toList();
        // at any moment, how many had been taken on and were not yet started
        List<java.time.Instant> moments = spans.stream().map(Span::received).toList();
        for (java.time.Instant t : moments) {
            long starting = spans.stream()
                    .filter(o -> !o.received().isAfter(t) && o.started().isAfter(t))
                    .count();
            assertThat(starting)
                    .as("allocations being started at %s: %s", t, spans)
                    .isLessThanOrEqualTo(2);
        }
        assertThat(agent.controller().waitingToStart()).isZero();
    }

    @Test
    void anAllocationDeletedWhileItWaitsToBeTakenOnNeverRuns() throws Exception {
        agent.close();
        extraConfig = "concurrentStarts: 1\n";
        agent = startAgent();
        client.resource(alloc("slow", "node-a", Map.of("runFor", "1h", "startBlockFor", "1500ms")))
                .create();
        await().atMost(Duration.ofSeconds(5)).until(() -> get("slow").getStatus() != null); // taken on: Pending
        client.resource(alloc("impatient", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(5)).until(() -> agent.controller().waitingToStart() == 1);
        client.resources(Allocation.class)
                .inNamespace("default")
                .withName("impatient")
                .delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> get("impatient") == null);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> get("slow").getStatus() != null
                        && get("slow").getStatus().getClientStatus() == ClientStatus.Running);
        Thread.sleep(300);
        assertThat(data.resolve("allocs/default/impatient")).doesNotExist();
        assertThat(agent.controller().waitingToStart()).isZero();
    }

    @Test
    void terminalAllocationsOverTheLimitAreCollectedAndNeverRunAgain() throws Exception {
        agent.close();
        extraConfig = "gc: {maxAllocations: 1, interval: 1h}\n";
        agent = startAgent();
        for (String name : List.of("first", "second")) {
            Allocation a = alloc(name, "node-a", Map.of("runFor", "50ms"));
            a.getSpec().setType(dev.drover.api.v1alpha1.AllocationType.Batch);
            client.resource(a).create();
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> get(name).getStatus() != null
                            && get(name).getStatus().getClientStatus() == ClientStatus.Complete);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> agent.controller().size() == 1);
        assertThat(data.resolve("allocs/default/first"))
                .as("the oldest terminal one is collected")
                .doesNotExist();
        assertThat(data.resolve("allocs/default/second")).exists();
        assertThat(get("first").getStatus().getClientStatus())
                .as("its status stays")
                .isEqualTo(ClientStatus.Complete);

        agent.close(); // a restart reconciles "first" again: it must not run again
        agent = startAgent();
        Thread.sleep(500);
        assertThat(data.resolve("allocs/default/first")).doesNotExist();
        assertThat(get("first").getStatus().getTaskStates().get("main").getEvents())
                .extracting(e -> e.getType().name())
                .containsOnlyOnce("Started");
    }

    @Test
    void anAllocationAskingForDevicesIsRefusedAtAdmissionWhenTheAgentHasNone() {
        Allocation a = alloc("wants-gpu", "node-a", Map.of("runFor", "1h"));
        dev.drover.api.v1alpha1.Resources resources = new dev.drover.api.v1alpha1.Resources();
        resources.setDevices(List.of(new dev.drover.api.v1alpha1.DeviceRequest("nvidia/gpu", 1)));
        a.getSpec().getTasks().getFirst().setResources(resources);
        client.resource(a).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("wants-gpu").getStatus() != null
                        && get("wants-gpu").getStatus().getClientStatus() == ClientStatus.Failed);
        assertThat(admitted("wants-gpu").getReason()).isEqualTo("OutOfdevices");
        assertThat(admitted("wants-gpu").getMessage())
                .contains("device nvidia/gpu: asked 1, 0 free (this agent runs no device plugins");
        assertThat(get("wants-gpu").getStatus().getTaskStates())
                .as("nothing of it started")
                .isEmpty();
    }

    /** The allocation's {@code Admitted} condition. */
    io.fabric8.kubernetes.api.model.Condition admitted(String name) {
        return get(name).getStatus().getConditions().stream()
                .filter(c -> c.getType().equals("Admitted"))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void addingATaskToARunningAllocationIsRefusedAndTheOldTasksRunOn() {
        client.resource(alloc("grows", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("grows").getStatus() != null
                        && get("grows").getStatus().getClientStatus() == ClientStatus.Running);
        client.resources(Allocation.class)
                .inNamespace("default")
                .withName("grows")
                .edit(a -> {
                    Task extra = new Task();
                    extra.setName("extra");
                    extra.setDriver("mock");
                    extra.setConfig(Map.of("runFor", "1h"));
                    a.getSpec().setTasks(List.of(a.getSpec().getTasks().getFirst(), extra));
                    return a;
                });
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(get("grows").getStatus().getConditions())
                        .anySatisfy(c -> {
                            assertThat(c.getType()).isEqualTo("SpecValid");
                            assertThat(c.getStatus()).isEqualTo("False");
                            assertThat(c.getMessage()).contains("spec.tasks", "cannot be added or removed");
                        }));
        assertThat(get("grows").getStatus().getClientStatus()).isEqualTo(ClientStatus.Running);
        assertThat(get("grows").getStatus().getTaskStates()).containsOnlyKeys("main");
    }

    @Test
    void changingTheServiceAccountOfARunningAllocationIsRefusedEvenWhereCelIsNotEnforced() {
        // the mock API server runs no CEL: the agent alone keeps a running allocation's identity fixed
        client.resource(alloc("identity", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("identity").getStatus() != null
                        && get("identity").getStatus().getClientStatus() == ClientStatus.Running);
        client.resources(Allocation.class)
                .inNamespace("default")
                .withName("identity")
                .edit(a -> {
                    a.getSpec().setServiceAccountName("deployer");
                    return a;
                });
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(get("identity").getStatus().getConditions())
                        .anySatisfy(c -> {
                            assertThat(c.getType()).isEqualTo("SpecValid");
                            assertThat(c.getStatus()).isEqualTo("False");
                            assertThat(c.getMessage())
                                    .contains(
                                            "spec.serviceAccountName",
                                            "changed from default to \"deployer\"; it is fixed for the allocation's"
                                                    + " life");
                        }));
        assertThat(get("identity").getStatus().getClientStatus()).isEqualTo(ClientStatus.Running);
    }

    static Allocation wantsDevices(String name, String device, int count) {
        Allocation a = alloc(name, "node-a", Map.of("runFor", "1h"));
        dev.drover.api.v1alpha1.Resources resources = new dev.drover.api.v1alpha1.Resources();
        resources.setDevices(List.of(new dev.drover.api.v1alpha1.DeviceRequest(device, count)));
        a.getSpec().getTasks().getFirst().setResources(resources);
        return a;
    }

    ClientStatus statusOf(String name) {
        Allocation a = get(name);
        return a == null || a.getStatus() == null ? null : a.getStatus().getClientStatus();
    }

    /**
     * Each running task's usage is read when /metrics is scraped (the mock driver's pretend 4 MiB, no limit), labelled
     * with its allocation; the series go with the allocation.
     */
    @Test
    void aRunningTasksUsageIsScrapedAndGoesWithItsAllocation() throws Exception {
        agent.close();
        agent = startAgent("--metrics-port", "0");
        client.resource(alloc("used", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("used").getStatus() != null
                        && get("used").getStatus().getClientStatus() == ClientStatus.Running);
        String labels = "{namespace=\"default\",allocation=\"used\",task=\"main\",}";

        String scrape = scrape();
        assertThat(scrape)
                .contains("drover_task_cpu_seconds_total" + labels)
                .contains("drover_task_memory_working_set_bytes" + labels + " 4194304.0")
                .contains("# TYPE drover_task_memory_limit_bytes gauge")
                .doesNotContain("drover_task_memory_limit_bytes{");

        client.resources(Allocation.class)
                .inNamespace("default")
                .withName("used")
                .delete();
        await().atMost(Duration.ofSeconds(20)).until(() -> get("used") == null);
        assertThat(scrape()).doesNotContain("allocation=\"used\"");
    }

    private String scrape() throws Exception {
        try (var http = java.net.http.HttpClient.newHttpClient()) {
            return http.send(
                            java.net.http.HttpRequest.newBuilder(
                                            java.net.URI.create("http://127.0.0.1:" + agent.metricsPort() + "/metrics"))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString())
                    .body();
        }
    }

    /** The HTTPS API is served with the certificate kept in the data dir, and refuses a caller without a token. */
    @Test
    void theHttpsApiServesWithTheStoredCertificate() throws Exception {
        agent.close();
        agent = startAgent("--api-port", "0");
        assertThat(agent.apiPort()).isPositive();
        String fingerprint = dev.drover.httpapi.AgentCertificate.loadOrCreate(
                        data.resolve("tls"),
                        "node-a",
                        List.of(java.net.InetAddress.getLoopbackAddress()),
                        java.time.Clock.systemUTC())
                .fingerprint();
        try (var http = java.net.http.HttpClient.newBuilder()
                .sslContext(dev.drover.httpapi.Pinning.to(fingerprint))
                .build()) {
            var r = http.send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                                    "https://127.0.0.1:" + agent.apiPort() + "/v1/allocations/default/web/logs/main"))
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(401);
            assertThat(r.body()).contains("no bearer token");
        }
        agent.close();
        agent = startAgent("--api-port", "0");
        assertThat(dev.drover.httpapi.AgentCertificate.loadOrCreate(
                                data.resolve("tls"),
                                "node-a",
                                List.of(java.net.InetAddress.getLoopbackAddress()),
                                java.time.Clock.systemUTC())
                        .fingerprint())
                .as("a restarted agent keeps its certificate")
                .isEqualTo(fingerprint);
    }

    @Test
    void devicesFromAPluginAreReservedPerTaskReleasedWhenTerminalAndKeptAcrossRestarts() throws Exception {
        client.resource(new io.fabric8.kubernetes.api.model.NodeBuilder()
                        .withNewMetadata()
                        .withName("node-a")
                        .endMetadata()
                        .build())
                .create();
        agent.close();
        agent = startAgent(
                "--device-plugin",
                "fake:" + Path.of("..", "examples", "devices", "fake-gpus.yaml").toAbsolutePath());
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            var node = client.nodes().withName("node-a").get();
            assertThat(node.getStatus().getCapacity()).containsKey("drover.dev/nvidia-gpu");
            assertThat(node.getStatus()
                            .getCapacity()
                            .get("drover.dev/nvidia-gpu")
                            .getAmount())
                    .isEqualTo("2");
            // (labels go in the same nodes/status patch; this mock keeps only status from it, so the agent
            // sets them back, 3 times a minute at most: NodeRegistrarTest)
        });
        client.resource(wantsDevices("one-gpu", "nvidia/gpu", 1)).create();
        await().atMost(Duration.ofSeconds(20)).until(() -> statusOf("one-gpu") == ClientStatus.Running);
        var allocated = get("one-gpu").getStatus().getAllocatedDevices();
        assertThat(allocated).singleElement().satisfies(d -> {
            assertThat(d.getTask()).isEqualTo("main");
            assertThat(d.getVendor()).isEqualTo("nvidia");
            assertThat(d.getModel()).isEqualTo("Tesla T4");
            assertThat(d.getIds()).hasSize(1);
        });

        client.resource(wantsDevices("two-gpus", "gpu", 2)).create();
        await().atMost(Duration.ofSeconds(20)).until(() -> statusOf("two-gpus") == ClientStatus.Failed);
        assertThat(admitted("two-gpus").getMessage()).endsWith("device gpu: asked 2, 1 free");

        agent.close(); // the reservation is stored: the same instance after a restart
        agent = startAgent(
                "--device-plugin",
                "fake:" + Path.of("..", "examples", "devices", "fake-gpus.yaml").toAbsolutePath());
        await().atMost(Duration.ofSeconds(20)).until(() -> statusOf("one-gpu") == ClientStatus.Running);
        assertThat(get("one-gpu").getStatus().getAllocatedDevices().getFirst().getIds())
                .isEqualTo(allocated.getFirst().getIds());

        client.resources(Allocation.class)
                .inNamespace("default")
                .withName("one-gpu")
                .edit(a -> {
                    a.getSpec().setDesiredStatus(dev.drover.api.v1alpha1.DesiredStatus.Stop);
                    return a;
                });
        await().atMost(Duration.ofSeconds(20)).until(() -> statusOf("one-gpu") == ClientStatus.Complete);
        client.resource(wantsDevices("both-t4", "nvidia/gpu/Tesla T4", 2)).create();
        await().atMost(Duration.ofSeconds(20)).until(() -> statusOf("both-t4") == ClientStatus.Running);
        assertThat(get("both-t4").getStatus().getAllocatedDevices().getFirst().getIds())
                .hasSize(2);
    }

    @Test
    void aDeletedAllocationsDevicesGoToNoOneElseUntilItsTasksAreDead() throws Exception {
        client.resource(new io.fabric8.kubernetes.api.model.NodeBuilder()
                        .withNewMetadata()
                        .withName("node-a")
                        .endMetadata()
                        .build())
                .create();
        agent.close();
        agent = startAgent(
                "--device-plugin",
                "fake:" + Path.of("..", "examples", "devices", "fake-gpus.yaml").toAbsolutePath());
        Allocation holder = wantsDevices("holder", "nvidia/gpu", 2);
        Task slow = holder.getSpec().getTasks().getFirst();
        slow.setConfig(Map.of("killAfter", "4s")); // runs until killed, then takes 4 s to die
        slow.setKillTimeout("10s");
        client.resource(holder).create();
        await().atMost(Duration.ofSeconds(20)).until(() -> statusOf("holder") == ClientStatus.Running);

        client.resources(Allocation.class)
                .inNamespace("default")
                .withName("holder")
                .delete();
        await().atMost(Duration.ofSeconds(5)).until(() -> agent.controller().size() == 0); // its destroy has begun
        client.resource(wantsDevices("newcomer", "nvidia/gpu", 1)).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() ->
                        statusOf("newcomer") == ClientStatus.Failed || statusOf("newcomer") == ClientStatus.Running);
        assertThat(get("holder")).as("still being destroyed: its task is dying").isNotNull();
        assertThat(statusOf("newcomer"))
                .as("no GPU while the dying task may still use it")
                .isEqualTo(ClientStatus.Failed);
        assertThat(admitted("newcomer").getMessage()).endsWith("device nvidia/gpu: asked 1, 0 free");

        await().atMost(Duration.ofSeconds(20)).until(() -> get("holder") == null);
        client.resource(wantsDevices("after", "nvidia/gpu", 1)).create();
        await().atMost(Duration.ofSeconds(20)).until(() -> statusOf("after") == ClientStatus.Running);
    }

    /** Threads the agent starts, it stops: after close() no thread it started is left (virtual ones are joined too). */
    @Test
    void closeLeavesNoThreadBehind() throws Exception {
        agent.close();
        java.util.Set<Long> before = LiveThreads.ids(LiveThreads.now()); // virtual threads too
        agent = startAgent();
        client.resource(alloc("leak-check", "node-a", Map.of("runFor", "1h"))).create();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("leak-check").getStatus() != null
                        && get("leak-check").getStatus().getClientStatus() == ClientStatus.Running);
        agent.close();
        agent = null;
        // the client belongs to the test, and its HTTP pools (named "<n>-pool-<n>-thread-<n>") stay with it
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(LiveThreads.startedSince(
                                before,
                                t -> t.name().startsWith("JdkHttpClientFactory")
                                        || t.name().matches("-?\\d+-pool-.*")
                                        || t.name().startsWith("HttpClient")
                                        || t.name().startsWith("awaitility")))
                        .isEmpty());
    }
}
