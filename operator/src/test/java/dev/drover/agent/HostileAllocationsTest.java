package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.controller.UnreadableAllocations;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Allocations an API server without the CRD's schema lets through, which the
 * Java model cannot read: each is reported Failed naming the field, and the
 * agent's watch (and so every other allocation) carries on.
 */
class HostileAllocationsTest {

    static final ResourceDefinitionContext ALLOCATIONS = new ResourceDefinitionContext.Builder()
            .withGroup("drover.dev")
            .withVersion("v1alpha1")
            .withPlural("allocations")
            .withKind("Allocation")
            .withNamespaced(true)
            .build();

    @TempDir
    Path data;

    MockApi api;
    KubernetesClient client;
    KubernetesClient agentClient;
    Agent agent;

    @BeforeEach
    void start() throws Exception {
        api = new MockApi();
        client = api.client();
        agentClient = new KubernetesClientBuilder()
                .withConfig(client.getConfiguration())
                .withHttpClientFactory(new JdkHttpClientFactory())
                .withKubernetesSerialization(UnreadableAllocations.serialization())
                .build();
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
                                "--field-selector=false"),
                        Map.of()),
                agentClient);
    }

    @AfterEach
    void stop() {
        agent.close();
        agentClient.close();
        api.close();
    }

    void createRaw(String name, String specJson) {
        String json = "{\"apiVersion\":\"drover.dev/v1alpha1\",\"kind\":\"Allocation\",\"metadata\":{\"name\":\"" + name
                + "\",\"namespace\":\"default\"},\"spec\":" + specJson + "}";
        client.genericKubernetesResources(ALLOCATIONS)
                .inNamespace("default")
                .resource(client.getKubernetesSerialization().unmarshal(json, GenericKubernetesResource.class))
                .create();
    }

    Allocation get(String name) {
        return client.resources(Allocation.class)
                .inNamespace("default")
                .withName(name)
                .get();
    }

    @Test
    void unreadableAllocationsAreFailedNamingTheFieldAndTheOthersRun() {
        Map<String, String> hostile = Map.of(
                "bad-enum",
                        "{\"nodeName\":\"node-a\",\"desiredStatus\":\"Explode\",\"tasks\":[{\"name\":\"t\",\"driver\":\"mock\"}]}",
                "bad-hook",
                        "{\"nodeName\":\"node-a\",\"tasks\":[{\"name\":\"t\",\"driver\":\"mock\",\"lifecycle\":{\"hook\":\"Sometimes\"}}]}",
                "tasks-not-a-list", "{\"nodeName\":\"node-a\",\"tasks\":5}",
                "count-not-a-number",
                        "{\"nodeName\":\"node-a\",\"tasks\":[{\"name\":\"t\",\"driver\":\"mock\","
                                + "\"resources\":{\"devices\":[{\"name\":\"gpu\",\"count\":\"many\"}]}}]}");
        hostile.forEach(this::createRaw);
        createRaw(
                "good",
                "{\"nodeName\":\"node-a\",\"tasks\":[{\"name\":\"t\",\"driver\":\"mock\",\"config\":{\"runFor\":\"1h\"}}]}");
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("good").getStatus() != null
                        && get("good").getStatus().getClientStatus() == ClientStatus.Running);
        Map<String, String> fields = Map.of(
                "bad-enum",
                "spec.desiredStatus",
                "bad-hook",
                "spec.tasks[0].lifecycle.hook",
                "tasks-not-a-list",
                "spec.tasks",
                "count-not-a-number",
                "spec.tasks[0].resources.devices[0].count");
        for (var e : fields.entrySet()) {
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                // read untyped: the test's own client cannot read these either
                GenericKubernetesResource a = client.genericKubernetesResources(ALLOCATIONS)
                        .inNamespace("default")
                        .withName(e.getKey())
                        .get();
                Map<String, Object> status = a.get("status");
                assertThat(status).as(e.getKey()).isNotNull();
                assertThat(status.get("clientStatus")).isEqualTo("Failed");
                assertThat(status.get("conditions").toString()).contains("SpecValid", e.getValue(), "cannot be read");
                assertThat(
                                a.getMetadata().getAnnotations() == null
                                        ? Map.of()
                                        : a.getMetadata().getAnnotations())
                        .as("nothing in-memory is written back")
                        .doesNotContainKey("drover.dev/unreadable");
                assertThat(a.getAdditionalProperties().get("spec").toString())
                        .as("the user's spec is kept")
                        .contains("tasks");
            });
        }
    }

    static String task(String name, String driver, String extra) {
        return "{\"name\":" + json(name) + (driver == null ? "" : ",\"driver\":" + json(driver)) + extra + "}";
    }

    static String spec(String extra, String... tasks) {
        return "{\"nodeName\":\"node-a\"" + extra + ",\"tasks\":[" + String.join(",", tasks) + "]}";
    }

    static String json(String s) {
        return io.fabric8.kubernetes.client.utils.Serialization.asJson(s);
    }

    static String many(int n, java.util.function.IntFunction<String> item) {
        return java.util.stream.IntStream.range(0, n).mapToObj(item).collect(java.util.stream.Collectors.joining(","));
    }

    /**
     * Issue 9's list: malformed and hostile allocations, each with what its status must say. They reach the agent
     * as they are (this API server has no schema), and each must end Failed with a message naming the problem,
     * without crashing the agent or keeping it busy afterwards.
     */
    static Map<String, String[]> hostile() {
        String mock = ",\"config\":{\"runFor\":\"1h\"}";
        Map<String, String[]> h = new java.util.LinkedHashMap<>();
        h.put("bad-desired-status", new String[] {
            "{\"nodeName\":\"node-a\",\"desiredStatus\":\"Explode\",\"tasks\":[" + task("t", "mock", mock) + "]}",
            "spec.desiredStatus"
        });
        h.put("bad-type", new String[] {spec(",\"type\":\"Daemon\"", task("t", "mock", mock)), "spec.type"});
        h.put("bad-restart-mode", new String[] {
            spec(",\"restartPolicy\":{\"mode\":\"Sometimes\"}", task("t", "mock", mock)), "spec.restartPolicy.mode"
        });
        h.put("bad-hook", new String[] {
            spec("", task("t", "mock", ",\"lifecycle\":{\"hook\":\"Sometimes\"}")), "spec.tasks[0].lifecycle.hook"
        });
        h.put("no-tasks", new String[] {spec(""), "needs at least one task"});
        h.put("tasks-missing", new String[] {"{\"nodeName\":\"node-a\"}", "spec.tasks"});
        h.put("tasks-not-a-list", new String[] {"{\"nodeName\":\"node-a\",\"tasks\":5}", "spec.tasks"});
        h.put(
                "tasks-a-map",
                new String[] {"{\"nodeName\":\"node-a\",\"tasks\":{\"t\":{\"driver\":\"mock\"}}}", "spec.tasks"});
        h.put("too-many-tasks", new String[] {spec("", many(5000, i -> task("t" + i, "mock", mock))), "at most 64"});
        h.put("empty-task", new String[] {spec("", "{}"), "spec.tasks[0].name: is required"});
        h.put("task-without-name", new String[] {spec("", "{\"driver\":\"mock\"}"), "spec.tasks[0].name"});
        h.put("task-without-driver", new String[] {spec("", task("t", null, "")), "spec.tasks[0].driver"});
        h.put("duplicate-task-names", new String[] {
            spec("", task("t", "mock", mock), task("t", "mock", mock)), "used by another task"
        });
        h.put("name-escapes-up", new String[] {spec("", task("../../etc", "mock", mock)), "DNS-1123"});
        h.put("name-with-slash", new String[] {spec("", task("a/b", "mock", mock)), "DNS-1123"});
        h.put("name-dot", new String[] {spec("", task(".", "mock", mock)), "DNS-1123"});
        h.put("name-with-nul", new String[] {spec("", task("a\u0000b", "mock", mock)), "\\u0000"});
        h.put("name-absolute", new String[] {spec("", task("/etc/passwd", "mock", mock)), "DNS-1123"});
        h.put("name-huge", new String[] {spec("", task("x".repeat(200_000), "mock", mock)), "(200000 characters)"});
        h.put("unknown-driver", new String[] {spec("", task("t", "docker", mock)), "docker"});
        h.put("raw-exec-disabled", new String[] {
            spec("", task("t", "raw_exec", ",\"config\":{\"command\":\"/bin/sh\"}")), "raw_exec"
        });
        h.put("bad-mock-config", new String[] {
            spec("", task("t", "mock", ",\"config\":{\"runFor\":\"soon\"}")), "runFor"
        });
        h.put("unknown-config-key", new String[] {
            spec("", task("t", "mock", ",\"config\":{\"rm -rf\":\"/\"}")), "rm -rf"
        });
        h.put("config-not-an-object", new String[] {
            spec("", task("t", "mock", ",\"config\":\"x\"")), "spec.tasks[0].config"
        });
        h.put("bad-kill-timeout", new String[] {
            spec("", task("t", "mock", mock + ",\"killTimeout\":\"forever\"")), "killTimeout"
        });
        h.put("negative-kill-timeout", new String[] {
            spec("", task("t", "mock", mock + ",\"killTimeout\":\"-5s\"")), "killTimeout"
        });
        h.put("bad-shutdown-delay", new String[] {
            spec("", task("t", "mock", mock + ",\"shutdownDelay\":\"1 fortnight\"")), "shutdownDelay"
        });
        h.put("bad-restart-delay", new String[] {
            spec(",\"restartPolicy\":{\"delay\":\"soon\"}", task("t", "mock", mock)), "delay"
        });
        h.put("restart-interval-too-short", new String[] {
            spec(",\"restartPolicy\":{\"interval\":\"1s\"}", task("t", "mock", mock)), "shorter than the minimum"
        });
        h.put("negative-attempts", new String[] {
            spec(",\"restartPolicy\":{\"attempts\":-1}", task("t", "mock", mock)), "negative"
        });
        h.put("bad-kill-signal", new String[] {
            spec("", task("t", "mock", mock + ",\"killSignal\":\"SIGFOO\"")), "not a signal name"
        });
        h.put("negative-cpu", new String[] {
            spec("", task("t", "mock", mock + ",\"resources\":{\"cpuMillis\":-1}")), "cpuMillis"
        });
        h.put("huge-env", new String[] {
            spec(
                    "",
                    task(
                            "t",
                            "mock",
                            mock + ",\"env\":[" + many(20_000, i -> "{\"name\":\"V" + i + "\",\"value\":\"x\"}")
                                    + "]")),
            "variables; at most"
        });
        h.put("bad-env-name", new String[] {
            spec("", task("t", "mock", mock + ",\"env\":[{\"name\":\"A=B\",\"value\":\"x\"}]")), "env[0].name"
        });
        h.put("too-many-devices", new String[] {
            spec(
                    "",
                    task(
                            "t",
                            "mock",
                            mock + ",\"resources\":{\"devices\":[" + many(500, i -> "{\"name\":\"gpu\",\"count\":1}")
                                    + "]}")),
            "requests; at most"
        });
        h.put("zero-devices", new String[] {
            spec("", task("t", "mock", mock + ",\"resources\":{\"devices\":[{\"name\":\"gpu\",\"count\":0}]}")),
            "at least 1 device"
        });
        h.put("count-not-a-number", new String[] {
            spec("", task("t", "mock", mock + ",\"resources\":{\"devices\":[{\"name\":\"gpu\",\"count\":\"many\"}]}")),
            "spec.tasks[0].resources.devices[0].count"
        });
        h.put("two-leaders", new String[] {
            spec("", task("a", "mock", mock + ",\"leader\":true"), task("b", "mock", mock + ",\"leader\":true")),
            "leaders"
        });
        h.put("previous-is-itself", new String[] {
            spec(",\"previousAllocation\":\"previous-is-itself\"", task("t", "mock", mock)),
            "names this allocation itself"
        });
        h.put("previous-escapes", new String[] {
            spec(",\"previousAllocation\":\"../other-ns/x\"", task("t", "mock", mock)), "spec.previousAllocation"
        });
        h.put("tiny-disk", new String[] {spec(",\"ephemeralDisk\":{\"sizeMB\":0}", task("t", "mock", mock)), "too small"
        });
        return h;
    }

    @Test
    void hostileAllocationsEachGetAClearStatusAndLeaveTheAgentIdle() {
        Map<String, String[]> hostile = hostile();
        assertThat(hostile).hasSizeGreaterThanOrEqualTo(30);
        hostile.forEach((name, h) -> createRaw(name, h[0]));
        createRaw(
                "good",
                "{\"nodeName\":\"node-a\",\"tasks\":[{\"name\":\"t\",\"driver\":\"mock\",\"config\":{\"runFor\":\"1h\"}}]}");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> get("good").getStatus() != null
                        && get("good").getStatus().getClientStatus() == ClientStatus.Running);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            org.assertj.core.api.SoftAssertions soft = new org.assertj.core.api.SoftAssertions();
            for (var e : hostile.entrySet()) {
                GenericKubernetesResource a = client.genericKubernetesResources(ALLOCATIONS)
                        .inNamespace("default")
                        .withName(e.getKey())
                        .get();
                Map<String, Object> status = a.get("status");
                soft.assertThat(status == null ? null : status.get("clientStatus"))
                        .as(e.getKey())
                        .isEqualTo("Failed");
                soft.assertThat(String.valueOf(status))
                        .as(e.getKey())
                        .contains(e.getValue()[1])
                        .hasSizeLessThan(20_000); // a hostile value is named, not copied whole into the status
            }
            soft.assertAll();
        });
        long writes = agent.statusWriter().writes();
        var os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long cpuBefore = os.getProcessCpuTime();
        long wallBefore = System.nanoTime();
        await().pollDelay(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(4)).until(() -> true);
        double cpuShare = (os.getProcessCpuTime() - cpuBefore) / (double) (System.nanoTime() - wallBefore);
        assertThat(agent.statusWriter().writes())
                .as("no status is written again and again")
                .isEqualTo(writes);
        assertThat(cpuShare)
                .as("the agent is idle, not spinning on what it refused")
                .isLessThan(0.5);
        assertThat(get("good").getStatus().getClientStatus()).isEqualTo(ClientStatus.Running);
    }

    GenericKubernetesResource getRaw(String name) {
        return client.genericKubernetesResources(ALLOCATIONS)
                .inNamespace("default")
                .withName(name)
                .get();
    }

    void deleteAndAwaitGone(String name) {
        client.genericKubernetesResources(ALLOCATIONS)
                .inNamespace("default")
                .withName(name)
                .delete();
        await().atMost(Duration.ofSeconds(20))
                .alias("the finalizer of " + name + " is removed")
                .until(() -> getRaw(name) == null);
    }

    static final String GOOD = "{\"nodeName\":\"node-a\",\"tasks\":[{\"name\":\"t\",\"driver\":\"mock\","
            + "\"config\":{\"runFor\":\"1h\"}}]}";

    /** Item 24: names are DNS-1123 subdomains, whose parts may be longer than 63; such a one was ignored and undeletable. */
    @Test
    void aNameWithAPartLongerThan63CharactersRunsAndItsDeleteCompletes() {
        String name = "a".repeat(70) + ".v1";
        createRaw(name, GOOD);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get(name).getStatus() != null
                        && get(name).getStatus().getClientStatus() == ClientStatus.Running);
        deleteAndAwaitGone(name);
        assertThat(data.resolve("allocs/default/" + name)).doesNotExist();
    }

    /** Item 25: a killTimeout of 900 terms overflowed the stack: no status, and a delete that never completed. */
    @Test
    void aKillTimeoutOfNineHundredTermsIsRefusedWithAStatusAndItsDeleteCompletes() {
        createRaw(
                "long-kill-timeout",
                spec(
                        "",
                        task(
                                "t",
                                "mock",
                                ",\"config\":{\"runFor\":\"1h\"},\"killTimeout\":" + json("1s".repeat(900)))));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            Map<String, Object> status = getRaw("long-kill-timeout").get("status");
            assertThat(status).isNotNull();
            assertThat(status.get("clientStatus")).isEqualTo("Failed");
            assertThat(status.get("conditions").toString())
                    .contains("spec.tasks[0].killTimeout", "(1800 characters) is too long for a duration");
        });
        deleteAndAwaitGone("long-kill-timeout");
    }

    /** Sends {@code json} as it is: the test's own client cannot read (so cannot send) what is too deep for Jackson. */
    void postRaw(String json) throws Exception {
        try (var http = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1)
                .build()) {
            var response = http.send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                                    client.getConfiguration().getMasterUrl()
                                            + "apis/drover.dev/v1alpha1/namespaces/default/allocations"))
                            .header("Content-Type", "application/json")
                            .POST(java.net.http.HttpRequest.BodyPublishers.ofString(json))
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isBetween(200, 299);
        }
    }

    /** The status of {@code name}, read as text with no depth limit. */
    String rawStatus(String name) throws Exception {
        try (var http = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1)
                .build()) {
            String body = http.send(
                            java.net.http.HttpRequest.newBuilder(java.net.URI.create(client.getConfiguration()
                                                    .getMasterUrl()
                                            + "apis/drover.dev/v1alpha1/namespaces/default/allocations/" + name))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString())
                    .body();
            int at = body.indexOf("\"status\":");
            return at < 0 ? "" : body.substring(at);
        }
    }

    /**
     * Item 14: a task config nested about 1000 levels deep (a real API server takes up to 10 000) passed Jackson's
     * depth limit while the agent read the list or watch of its allocations, outside the lenient deserializer: the
     * whole read failed, so no allocation of the node ran. It is reported unreadable, and the others run.
     */
    @Test
    void aDeeplyNestedConfigIsFailedAndTheOtherAllocationsRun() throws Exception {
        int depth = 996; // as deep as this mock API server itself takes (1000 levels in all)
        String deep = "{\"a\":".repeat(depth) + "1" + "}".repeat(depth);
        postRaw("{\"apiVersion\":\"drover.dev/v1alpha1\",\"kind\":\"Allocation\",\"metadata\":{\"name\":\"deep\","
                + "\"namespace\":\"default\"},\"spec\":{\"nodeName\":\"node-a\",\"tasks\":[{\"name\":\"t\","
                + "\"driver\":\"mock\",\"config\":" + deep + "}]}}");
        createRaw("good", GOOD);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get("good").getStatus() != null
                        && get("good").getStatus().getClientStatus() == ClientStatus.Running);
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(rawStatus("deep"))
                        .contains("\"clientStatus\":\"Failed\"", "spec.tasks[0].config.a.a", "nested more than")
                        .hasSizeLessThan(20_000));
    }

    /** The agent's parser takes a list with an item as deep as a real API server stores (10 000 levels). */
    @Test
    void aListWithAnItemTenThousandLevelsDeepIsReadWithThatItemUnreadable() {
        int depth = 10_000;
        String item = "{\"apiVersion\":\"drover.dev/v1alpha1\",\"kind\":\"Allocation\",\"metadata\":{\"name\":\"%s\","
                + "\"namespace\":\"default\"},\"spec\":{\"nodeName\":\"node-a\",\"tasks\":[{\"name\":\"t\","
                + "\"driver\":\"mock\",\"config\":%s}]}}";
        String list = "{\"apiVersion\":\"drover.dev/v1alpha1\",\"kind\":\"AllocationList\",\"items\":["
                + item.formatted("deep", "[".repeat(depth) + "]".repeat(depth)) + ","
                + item.formatted("good", "{\"runFor\":\"1h\"}") + "]}";
        var read = UnreadableAllocations.serialization()
                .unmarshal(
                        new java.io.ByteArrayInputStream(list.getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                        new com.fasterxml.jackson.core.type.TypeReference<
                                io.fabric8.kubernetes.api.model.DefaultKubernetesResourceList<Allocation>>() {});
        assertThat(read.getItems()).extracting(a -> a.getMetadata().getName()).containsExactly("deep", "good");
        assertThat(read.getItems().getFirst().getMetadata().getAnnotations().get("drover.dev/unreadable"))
                .startsWith("spec.tasks[0].config[0][0][0][0]...\tis nested more than 100 levels deep");
        assertThat(read.getItems().get(1).getSpec().getTasks().getFirst().getConfig())
                .containsEntry("runFor", "1h");
    }

    /**
     * Item 15: messages copied user values whole, so a 200 kB duration made a 600 kB status, a 1 MB wrong-typed
     * config a 1.8 MB one and 100 000 unknown keys a 6.6 MB one (past what etcd stores). Each status stays
     * under 64 KiB and names the problem; so does every Kubernetes Event.
     */
    @Test
    void hugeValuesInASpecGiveBoundedStatusesThatNameTheProblem() throws Exception {
        Map<String, String[]> huge = new java.util.LinkedHashMap<>();
        huge.put("huge-duration", new String[] {
            spec(
                    "",
                    task(
                            "t",
                            "mock",
                            ",\"config\":{\"runFor\":\"1h\"}," + "\"killTimeout\":" + json("1s".repeat(100_000)))),
            "spec.tasks[0].killTimeout"
        });
        huge.put("huge-wrong-type", new String[] {
            spec(
                    "",
                    task(
                            "t",
                            "mock",
                            ",\"config\":{\"runFor\":\"1h\"," + "\"exitCode\":" + json("x".repeat(1_000_000)) + "}")),
            "config.exitCode"
        });
        huge.put("huge-unknown-keys", new String[] {
            spec(
                    "",
                    task(
                            "t",
                            "mock",
                            ",\"config\":{\"runFor\":\"1h\"," + many(100_000, i -> json("key" + i) + ":1") + "}")),
            "100000 unknown keys"
        });
        huge.forEach((name, h) -> createRaw(name, h[0]));
        createRaw("good", GOOD);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> get("good").getStatus() != null
                        && get("good").getStatus().getClientStatus() == ClientStatus.Running);
        for (var e : huge.entrySet()) {
            await().atMost(Duration.ofSeconds(20))
                    .untilAsserted(() -> assertThat(rawStatus(e.getKey()))
                            .as(e.getKey())
                            .contains("\"clientStatus\":\"Failed\"", e.getValue()[1])
                            .hasSizeLessThan(64 * 1024));
        }
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(client.v1()
                                .events()
                                .inNamespace("default")
                                .list()
                                .getItems())
                        .extracting(ev -> ev.getMessage())
                        .anySatisfy(m -> assertThat(m).contains("100000 unknown keys"))
                        .allSatisfy(m -> assertThat(m.length()).isLessThanOrEqualTo(1024)));
    }
}
