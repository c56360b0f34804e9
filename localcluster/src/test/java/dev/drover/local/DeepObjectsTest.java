package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.agent.Agent;
import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Objects nested as deep as kube-apiserver takes them: its JSON decoder refuses a body nested more than 10 000 levels
 * (encoding/json's maxNestingDepth), and what it stores it serves back, alone, in lists, tables and watches.
 */
class DeepObjectsTest {

    static final String ALLOCATIONS = "/apis/drover.dev/v1alpha1/namespaces/default/allocations";

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static HttpClient http;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(
                LocalApiServer.Options.defaults().withNodes(List.of("a")).withKubeconfig(dir.resolve("kubeconfig")));
        http = HttpClient.newBuilder().sslContext(server.trust()).build();
    }

    @AfterAll
    static void stop() {
        http.close();
        server.close();
    }

    /** An Allocation named {@code name} whose JSON nests {@code depth} levels deep, the object itself the first. */
    static String allocation(String name, int depth) {
        // the object, spec, tasks, the task and its config are 5 levels; each {"a": ...} in config one more
        int inner = depth - 5;
        return "{\"apiVersion\":\"drover.dev/v1alpha1\",\"kind\":\"Allocation\",\"metadata\":{\"name\":\"" + name
                + "\"},\"spec\":{\"nodeName\":\"a\",\"tasks\":[{\"name\":\"web\",\"driver\":\"mock\",\"config\":"
                + "{\"a\":".repeat(inner) + "{}" + "}".repeat(inner) + "}]}}";
    }

    static HttpResponse<String> send(String method, String path, String body, String accept) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(server.url() + path))
                .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                .header("Accept", accept)
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            r.header("Content-Type", "application/json");
        }
        return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The deepest nesting in {@code json}, counted as encoding/json counts it (strings skipped). */
    static int depth(String json) {
        int depth = 0;
        int deepest = 0;
        boolean inString = false;
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                deepest = Math.max(deepest, ++depth);
            } else if (c == '}' || c == ']') {
                depth--;
            }
        }
        return deepest;
    }

    @Test
    void anObjectAsDeepAsARealServerTakesIsStoredAndServedBack() throws Exception {
        send("POST", ALLOCATIONS, allocation("shallow", 6), "application/json");
        for (int depth : new int[] {995, 1001, 10_000}) {
            String name = "deep-" + depth;
            HttpResponse<String> created = send("POST", ALLOCATIONS, allocation(name, depth), "application/json");
            assertThat(created.statusCode())
                    .as("%d levels: %s", depth, created.body())
                    .isEqualTo(201);

            HttpResponse<String> got = send("GET", ALLOCATIONS + "/" + name, null, "application/json");
            assertThat(got.statusCode()).as(got.body()).isEqualTo(200);
            assertThat(depth(got.body())).as("served back whole").isGreaterThanOrEqualTo(depth);
            HttpResponse<String> list = send("GET", ALLOCATIONS, null, "application/json");
            assertThat(list.statusCode())
                    .as("the list with it, %d levels", depth)
                    .isEqualTo(200);
            assertThat(list.body()).contains("\"name\":\"shallow\"", "\"name\":\"" + name + "\"");
            HttpResponse<String> table =
                    send("GET", ALLOCATIONS, null, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
            assertThat(table.statusCode())
                    .as("kubectl get alloc, %d levels", depth)
                    .isEqualTo(200);
            assertThat(table.body()).contains("shallow", name);
            HttpResponse<String> watch =
                    send("GET", ALLOCATIONS + "?watch=true&timeoutSeconds=1", null, "application/json");
            assertThat(watch.statusCode()).isEqualTo(200);
            assertThat(watch.body()).contains("\"name\":\"" + name + "\"");
        }
        try (KubernetesClient agents = Agent.client(Optional.of(server.kubeconfig()))) {
            assertThat(agents.resources(Allocation.class)
                            .inNamespace("default")
                            .list()
                            .getItems())
                    .as("a restarted agent lists them (reading the deep ones as unreadable)")
                    .extracting(a -> a.getMetadata().getName())
                    .contains("shallow", "deep-995", "deep-1001", "deep-10000");
        }
    }

    @Test
    void oneLevelDeeperIsRefusedWithTheRealServersMessage() throws Exception {
        String body = allocation("too-deep", 10_001);
        HttpResponse<String> r = send("POST", ALLOCATIONS, body, "application/json");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(r.body())
                .contains("\"reason\":\"BadRequest\"")
                .contains("the object provided is unrecognized (must be of type Allocation): couldn't get"
                        + " version/kind; json parse error: invalid character '{' exceeded max depth"
                        + " ({\\\"apiVersion\\\":\\\"drover.dev/v1al ...)");
        assertThat(send("GET", ALLOCATIONS + "/too-deep", null, "application/json")
                        .statusCode())
                .isEqualTo(404);
        HttpResponse<String> put = send("PUT", ALLOCATIONS + "/too-deep", body, "application/json");
        assertThat(put.statusCode()).isEqualTo(400);
        assertThat(put.body()).contains("(must be of type Allocation): couldn't get version/kind");
    }

    @Test
    void aPatchThatWouldNestTooDeepIsRefusedAndChangesNothing() throws Exception {
        assertThat(send("POST", ALLOCATIONS, allocation("patched", 6), "application/json")
                        .statusCode())
                .isEqualTo(201);
        // 9 996 levels under config (the 5th): 10 001 in all, though the patch itself nests 9 998
        String value = "{\"a\":".repeat(9_995) + "{}" + "}".repeat(9_995);
        HttpRequest patch = HttpRequest.newBuilder(URI.create(server.url() + ALLOCATIONS + "/patched"))
                .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                .header("Content-Type", "application/json-patch+json")
                .method(
                        "PATCH",
                        HttpRequest.BodyPublishers.ofString(
                                "[{\"op\":\"add\",\"path\":\"/spec/tasks/0/config/x\",\"value\":" + value + "}]"))
                .build();
        HttpResponse<String> r = http.send(patch, HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(422);
        assertThat(r.body()).contains("json parse error: invalid character '{' exceeded max depth");
        assertThat(send("GET", ALLOCATIONS + "/patched", null, "application/json")
                        .body())
                .doesNotContain("\"x\"");
    }
}
