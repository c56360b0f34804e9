package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;

/**
 * The agent's client serialization (Blackbird accessors, the bounded allocation reader) reads and writes an
 * allocation exactly as fabric8's own does, a field the metadata does not know kept as an additional property and
 * written back as it came.
 */
class AgentSerializationTest {

    static final String ALLOCATION = """
            {"apiVersion": "drover.dev/v1alpha1", "kind": "Allocation",
             "metadata": {"name": "hello", "namespace": "default", "uid": "u-1", "labels": {"app": "web"},
                          "futureMetadata": {"x": [1, 2]}},
             "spec": {"nodeName": "local",
                      "restartPolicy": {"attempts": 2, "interval": "1m", "delay": "1s", "mode": "Fail"},
                      "tasks": [{"name": "web", "driver": "mock", "leader": true,
                                 "config": {"runFor": "1h", "stdoutString": "hello"}}]},
             "status": {"clientStatus": "Running", "ready": "1/1"}}
            """;

    @Test
    void anAllocationReadsAndWritesAsFabric8sOwnSerializationDoes() throws Exception {
        KubernetesSerialization plain = new KubernetesSerialization();
        KubernetesSerialization agent = UnreadableAllocations.serialization();
        Allocation byPlain = plain.unmarshal(ALLOCATION, Allocation.class);
        Allocation byAgent = agent.unmarshal(ALLOCATION, Allocation.class);

        ObjectMapper json = new ObjectMapper();
        JsonNode expected = json.readTree(plain.asJson(byPlain));
        assertThat(json.readTree(agent.asJson(byAgent))).isEqualTo(expected);
        assertThat(json.readTree(plain.asJson(byAgent))).isEqualTo(expected);
        assertThat(expected.at("/metadata/futureMetadata/x/1").asInt())
                .as("a field the model keeps as an additional property")
                .isEqualTo(2);
        assertThat(expected.at("/spec/tasks/0/config/runFor").asText()).isEqualTo("1h");
        assertThat(byAgent.getStatus().getReady()).isEqualTo("1/1");
    }

    @Test
    void aWatchEventsAllocationIsReadAsAnAllocationEvenWhenItCannotBe() {
        KubernetesSerialization agent = UnreadableAllocations.serialization();
        WatchEvent event =
                agent.unmarshal("{\"type\": \"MODIFIED\", \"object\": " + ALLOCATION + "}", WatchEvent.class);
        assertThat(event.getObject())
                .as("not a generic resource the watch would convert, reading it again")
                .isInstanceOfSatisfying(
                        Allocation.class,
                        a -> assertThat(a.getSpec().getTasks())
                                .singleElement()
                                .satisfies(t -> assertThat(t.getName()).isEqualTo("web")));

        String unreadable = ALLOCATION.replace("\"mode\": \"Fail\"", "\"mode\": [\"not\", \"an\", \"enum\"]");
        WatchEvent bad = agent.unmarshal("{\"type\": \"ADDED\", \"object\": " + unreadable + "}", WatchEvent.class);
        assertThat(bad.getObject())
                .isInstanceOfSatisfying(
                        Allocation.class,
                        a -> assertThat(UnreadableAllocations.problem(a))
                                .hasValueSatisfying(
                                        v -> assertThat(v.toString()).contains("mode")));
    }

    @Test
    void textThatIsNotJsonIsStillReadAsFabric8ReadsItAndBrokenJsonFailsAsThere() throws Exception {
        KubernetesSerialization plain = new KubernetesSerialization();
        KubernetesSerialization agent = UnreadableAllocations.serialization();
        String yaml = """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: hello, namespace: default}
                spec: {nodeName: local, tasks: [{name: web, driver: mock, config: {runFor: 1h}}]}
                """;
        ObjectMapper json = new ObjectMapper();
        assertThat(json.readTree(agent.asJson(agent.unmarshal(yaml, Allocation.class))))
                .isEqualTo(json.readTree(plain.asJson(plain.unmarshal(yaml, Allocation.class))));
        assertThat(agent.unmarshal("\n  \t" + ALLOCATION, Allocation.class)
                        .getMetadata()
                        .getName())
                .as("white space before the JSON")
                .isEqualTo("hello");

        String broken = "{\"type\": \"ADDED\", \"object\": {\"kind\": ";
        Throwable byPlain = catchThrowable(() -> plain.unmarshal(broken, WatchEvent.class));
        assertThat(catchThrowable(() -> agent.unmarshal(broken, WatchEvent.class)))
                .as("the watch falls back to reading a tree on any exception; the type stays fabric8's")
                .isInstanceOf(byPlain.getClass())
                .isInstanceOf(KubernetesClientException.class);
    }
}
