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

    static final ResourceDefinitionContext ALLOCATIONS = new ResourceDefinitionContext.Builder().withGroup("drover.dev")
            .withVersion("v1alpha1").withPlural("allocations").withKind("Allocation").withNamespaced(true).build();

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
        agentClient = new KubernetesClientBuilder().withConfig(client.getConfiguration())
                .withHttpClientFactory(new JdkHttpClientFactory())
                .withKubernetesSerialization(UnreadableAllocations.serialization()).build();
        agent = Agent.start(AgentConfig.load(List.of("--node", "node-a", "--data-dir", data.toString(),
                "--metrics-port", "-1", "--field-selector=false"), Map.of()), agentClient);
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
        client.genericKubernetesResources(ALLOCATIONS).inNamespace("default")
                .resource(client.getKubernetesSerialization().unmarshal(json, GenericKubernetesResource.class)).create();
    }

    Allocation get(String name) {
        return client.resources(Allocation.class).inNamespace("default").withName(name).get();
    }

    @Test
    void unreadableAllocationsAreFailedNamingTheFieldAndTheOthersRun() {
        Map<String, String> hostile = Map.of(
                "bad-enum", "{\"nodeName\":\"node-a\",\"desiredStatus\":\"Explode\",\"tasks\":[{\"name\":\"t\",\"driver\":\"mock\"}]}",
                "bad-hook", "{\"nodeName\":\"node-a\",\"tasks\":[{\"name\":\"t\",\"driver\":\"mock\",\"lifecycle\":{\"hook\":\"Sometimes\"}}]}",
                "tasks-not-a-list", "{\"nodeName\":\"node-a\",\"tasks\":5}",
                "count-not-a-number", "{\"nodeName\":\"node-a\",\"tasks\":[{\"name\":\"t\",\"driver\":\"mock\","
                        + "\"resources\":{\"devices\":[{\"name\":\"gpu\",\"count\":\"many\"}]}}]}");
        hostile.forEach(this::createRaw);
        createRaw("good", "{\"nodeName\":\"node-a\",\"tasks\":[{\"name\":\"t\",\"driver\":\"mock\",\"config\":{\"runFor\":\"1h\"}}]}");
        await().atMost(Duration.ofSeconds(20)).until(() -> get("good").getStatus() != null
                && get("good").getStatus().getClientStatus() == ClientStatus.Running);
        Map<String, String> fields = Map.of("bad-enum", "spec.desiredStatus", "bad-hook", "spec.tasks[0].lifecycle.hook",
                "tasks-not-a-list", "spec.tasks", "count-not-a-number", "spec.tasks[0].resources.devices[0].count");
        for (var e : fields.entrySet()) {
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                // read untyped: the test's own client cannot read these either
                GenericKubernetesResource a = client.genericKubernetesResources(ALLOCATIONS).inNamespace("default")
                        .withName(e.getKey()).get();
                Map<String, Object> status = a.get("status");
                assertThat(status).as(e.getKey()).isNotNull();
                assertThat(status.get("clientStatus")).isEqualTo("Failed");
                assertThat(status.get("conditions").toString()).contains("SpecValid", e.getValue(), "cannot be read");
                assertThat(a.getMetadata().getAnnotations() == null ? Map.of() : a.getMetadata().getAnnotations())
                        .as("nothing in-memory is written back").doesNotContainKey("drover.dev/unreadable");
                assertThat(a.getAdditionalProperties().get("spec").toString()).as("the user's spec is kept")
                        .contains("tasks");
            });
        }
    }
}
