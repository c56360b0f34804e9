package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Server-side apply through the API server's front: who may apply, and applies that are hostile. */
class ServerSideApplyApiTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final String ALLOCATIONS = "/apis/drover.dev/v1alpha1/namespaces/default/allocations/";

    static LocalApiServer server;
    static HttpClient http;
    static String patcher;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults().withNodes(List.of("local")));
        http = HttpClient.newBuilder().sslContext(server.trust()).build();
        server.client()
                .serviceAccounts()
                .inNamespace("default")
                .resource(new ServiceAccountBuilder()
                        .withNewMetadata()
                        .withName("patcher")
                        .endMetadata()
                        .build())
                .create();
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: Role
                        metadata: {name: patcher, namespace: default}
                        rules:
                        - {apiGroups: [drover.dev], resources: [allocations], verbs: [get, patch]}
                        """).create();
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: RoleBinding
                        metadata: {name: patcher, namespace: default}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: patcher}
                        subjects:
                        - {kind: ServiceAccount, name: patcher, namespace: default}
                        """).create();
        patcher = server.client()
                .serviceAccounts()
                .inNamespace("default")
                .withName("patcher")
                .tokenRequest(new TokenRequestBuilder().withNewSpec().endSpec().build())
                .getStatus()
                .getToken();
    }

    @AfterAll
    static void stop() {
        if (http != null) {
            http.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** An Allocation named {@code name} whose spec.tasks is {@code tasks} (a JSON array). */
    static String allocation(String name, String tasks) {
        return """
                {"apiVersion": "drover.dev/v1alpha1", "kind": "Allocation",
                 "metadata": {"name": "%s", "namespace": "default"},
                 "spec": {"nodeName": "local", "tasks": %s}}""".formatted(name, tasks);
    }

    static HttpResponse<String> apply(String token, String name, String manager, String body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(server.url() + ALLOCATIONS + name + "?fieldManager=" + manager))
                        .header("Authorization", "Bearer " + token)
                        .header("Content-Type", ServerSideApply.CONTENT_TYPE)
                        .method("PATCH", HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static String admin() {
        return server.client().getConfiguration().getOauthToken();
    }

    static JsonNode json(HttpResponse<String> r) throws Exception {
        return JSON.readTree(r.body());
    }

    @Test
    void applyingANewObjectNeedsTheRightToCreateIt() throws Exception {
        String web = "[{\"name\": \"web\", \"driver\": \"mock\"}]";
        HttpResponse<String> refused = apply(patcher, "by-patcher", "patcher", allocation("by-patcher", web));
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(403);
        assertThat(json(refused).path("message").asText())
                .isEqualTo("allocations.drover.dev \"by-patcher\" is forbidden: User"
                        + " \"system:serviceaccount:default:patcher\" cannot create resource \"allocations\" in API"
                        + " group \"drover.dev\" in the namespace \"default\"");
        assertThat(server.client()
                        .genericKubernetesResources("drover.dev/v1alpha1", "Allocation")
                        .inNamespace("default")
                        .withName("by-patcher")
                        .get())
                .as("nothing was created")
                .isNull();

        assertThat(apply(admin(), "by-admin", "admin", allocation("by-admin", web))
                        .statusCode())
                .isEqualTo(201);
        String more = "[{\"name\": \"web\", \"driver\": \"mock\"}, {\"name\": \"side\", \"driver\": \"mock\"}]";
        HttpResponse<String> patched = apply(patcher, "by-admin", "patcher", allocation("by-admin", more));
        assertThat(patched.statusCode()).as(patched.body()).isEqualTo(200);
        assertThat(json(patched).path("spec").path("tasks").findValuesAsText("name"))
                .containsExactly("web", "side");
    }

    @Test
    void anApplyWithMoreItemsThanTheSchemaAllowsIsRefusedBeforeTheMerge() throws Exception {
        String one = "[{\"name\": \"web\", \"driver\": \"mock\"}]";
        assertThat(apply(admin(), "crowded", "admin", allocation("crowded", one))
                        .statusCode())
                .isEqualTo(201);
        StringBuilder tasks = new StringBuilder("[");
        for (int i = 0; i < 20_000; i++) {
            tasks.append(i == 0 ? "" : ",").append("{\"name\":\"t").append(i).append("\",\"driver\":\"mock\"}");
        }
        String crowded = allocation("crowded", tasks.append("]").toString());
        // merged into the stored object under the store's lock, 20 000 items froze the server for minutes
        HttpResponse<String> refused =
                assertTimeoutPreemptively(Duration.ofSeconds(10), () -> apply(admin(), "crowded", "other", crowded));
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(422);
        assertThat(json(refused).path("message").asText())
                .isEqualTo("Allocation.drover.dev \"crowded\" is invalid: spec.tasks: Too many: 20000: must have at"
                        + " most 64 items");
        assertThat(apply(admin(), "crowded", "admin", allocation("crowded", one))
                        .statusCode())
                .as("the server still answers")
                .isEqualTo(200);
    }

    @Test
    void concurrentAppliesCreatingTheSameObjectAllSucceed() throws Exception {
        int writers = 4;
        List<Integer> codes = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (var threads = java.util.concurrent.Executors.newFixedThreadPool(writers)) {
            for (int round = 0; round < 10; round++) {
                String name = "raced-" + round;
                var start = new java.util.concurrent.CountDownLatch(1);
                List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    String task = "[{\"name\": \"w" + w + "\", \"driver\": \"mock\"}]";
                    String manager = "writer-" + w;
                    done.add(threads.submit(() -> {
                        start.await();
                        HttpResponse<String> r = apply(admin(), name, manager, allocation(name, task));
                        codes.add(r.statusCode());
                        return r;
                    }));
                }
                start.countDown();
                for (var f : done) {
                    f.get();
                }
                assertThat(server.client()
                                .genericKubernetesResources("drover.dev/v1alpha1", "Allocation")
                                .inNamespace("default")
                                .withName(name)
                                .get()
                                .get("spec")
                                .toString())
                        .as("every writer's task is there")
                        .contains("name=w0", "name=w1", "name=w2", "name=w3");
            }
        }
        // the losers of a race to create are updates, as on the API server: never 409 AlreadyExists
        assertThat(codes).hasSize(40).containsOnly(200, 201);
        assertThat(codes.stream().filter(c -> c == 201)).hasSize(10);
    }

    @Test
    void aBodyOfCountlessBadItemsGetsAShortAnswer() throws Exception {
        String empties = "[" + ",{}".repeat(200_000).substring(1) + "]";
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(server.url() + ALLOCATIONS.substring(0, ALLOCATIONS.length() - 1)))
                        .header("Authorization", "Bearer " + admin())
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(allocation("empties", empties)))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(422);
        // each {} was a missing name and driver and a duplicate key: 600 000 errors in one message of 40 MB
        assertThat(json(r).path("message").asText())
                .startsWith("Allocation.drover.dev \"empties\" is invalid: [spec.tasks: Too many: 200000: must have"
                        + " at most 64 items, ")
                .doesNotContain("Required value", "Duplicate value")
                .hasSizeLessThan(1_000);
    }
}
