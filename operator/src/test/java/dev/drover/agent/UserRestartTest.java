package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.allocrunner.UserRestart;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.RestartMode;
import dev.drover.api.v1alpha1.RestartPolicy;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code drover.dev/restartedAt} against the agent and fabric8's CRUD mock: each new value restarts the running
 * tasks (or the one it names) once, outside the restart policy; the value an allocation is created with, the same
 * value again, and an agent restart restart nothing; a value the agent cannot act on is a Warning Event.
 */
class UserRestartTest {

    static final String ANNOTATION = "drover.dev/restartedAt";

    @TempDir
    Path data;

    MockApi api;
    KubernetesClient client;
    Agent agent;

    @BeforeEach
    void start() throws Exception {
        api = new MockApi();
        client = api.client();
        agent = startAgent();
    }

    Agent startAgent() throws Exception {
        Path config = data.resolveSibling(data.getFileName() + "-agent.yaml");
        Files.writeString(config, "statusWrites: {batchDelay: 100ms, resync: 2s}\n");
        return Agent.start(
                AgentConfig.load(
                        List.of(
                                "--node=node-a",
                                "--data-dir=" + data,
                                "--metrics-port=-1",
                                "--api-port=-1",
                                "--field-selector=false",
                                "--config=" + config),
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

    Allocation get(String name) {
        return client.resources(Allocation.class)
                .inNamespace("default")
                .withName(name)
                .get();
    }

    /** Two long-running tasks whose policy allows no restart at all: a counted restart would fail them. */
    Allocation twoTasks(String name, String restartedAt) {
        Allocation a = AgentTest.alloc(name, "node-a", Map.of("runFor", "1h"));
        Task side = new Task();
        side.setName("side");
        side.setDriver("mock");
        side.setConfig(Map.of("runFor", "1h"));
        a.getSpec().getTasks().getFirst().setName("web");
        a.getSpec().setTasks(List.of(a.getSpec().getTasks().getFirst(), side));
        RestartPolicy none = new RestartPolicy();
        none.setAttempts(0);
        none.setInterval("1h");
        none.setDelay("0s");
        none.setMode(RestartMode.Fail);
        a.getSpec().setRestartPolicy(none);
        a.getMetadata().setAnnotations(Map.of(ANNOTATION, restartedAt));
        return a;
    }

    void annotate(String name, String value) {
        annotate(name, value, null);
    }

    void annotate(String name, String value, String by) {
        client.resources(Allocation.class).inNamespace("default").withName(name).edit(a -> {
            Map<String, String> annotations = new HashMap<>(a.getMetadata().getAnnotations());
            annotations.put(ANNOTATION, value);
            if (by != null) {
                annotations.put(UserRestart.BY_ANNOTATION, by);
            }
            a.getMetadata().setAnnotations(annotations);
            return a;
        });
    }

    TaskState task(String alloc, String task) {
        return get(alloc).getStatus().getTaskStates().get(task);
    }

    void awaitRestarts(String alloc, int web, int side) {
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(task(alloc, "web").getRestarts()).isEqualTo(web);
            assertThat(task(alloc, "side").getRestarts()).isEqualTo(side);
            assertThat(task(alloc, "web").getState()).isEqualTo(TaskState.State.Running);
            assertThat(task(alloc, "side").getState()).isEqualTo(TaskState.State.Running);
        });
    }

    void awaitRunning(String name) {
        await().atMost(Duration.ofSeconds(20))
                .until(() -> get(name).getStatus() != null
                        && get(name).getStatus().getClientStatus() == ClientStatus.Running
                        && "2/2".equals(get(name).getStatus().getReady()));
    }

    @Test
    void eachNewValueRestartsTheRunningTasksOnceAndAnAgentRestartDoesNotRepeatIt() throws Exception {
        client.resource(twoTasks("web", "2026-01-01T00:00:00Z")).create();
        awaitRunning("web");
        assertThat(task("web", "web").getRestarts())
                .as("the value it was created with")
                .isZero();

        annotate("web", "2026-01-01T00:01:00Z");
        awaitRestarts("web", 1, 1);
        assertThat(task("web", "web").getEvents())
                .filteredOn(e -> e.getType() == TaskEventType.RestartSignaled)
                .singleElement()
                .satisfies(e -> assertThat(e.getRestartReason()).isEqualTo("User requested restart"));
        assertThat(task("web", "web").getFailed())
                .as("not counted against attempts: 0")
                .isFalse();

        annotate("web", "web@2026-01-01T00:02:00Z", "alice\u001b[2J");
        awaitRestarts("web", 2, 1);
        assertThat(task("web", "web").getEvents())
                .filteredOn(e -> e.getType() == TaskEventType.RestartSignaled)
                .last()
                .satisfies(e -> assertThat(e.getRestartReason())
                        .as("who asked, as the annotation names them, escaped")
                        .isEqualTo("User requested restart by \"alice\\u001b[2J\""));

        agent.close();
        agent = startAgent(); // finds the value it acted on last, and must not act on it again
        await().atMost(Duration.ofSeconds(10)).until(() -> agent.controller().size() == 1);
        annotate("web", "side@2026-01-01T00:03:00Z"); // reconciled after the restored copy was
        awaitRestarts("web", 2, 2);
        assertThat(get("web").getStatus().getRestarts()).isEqualTo(4);
    }

    @Test
    void aValueTheAgentCannotActOnIsAWarningAndTheNextGoodOneWorks() {
        client.resource(twoTasks("odd", "")).create();
        awaitRunning("odd");

        annotate("odd", "x".repeat(300));
        awaitWarning("more than 256");
        annotate("odd", "2026\u0007");
        awaitWarning("control characters");
        annotate("odd", "db@2026-01-01T00:00:00Z");
        awaitWarning("names task \"db\", which the allocation does not have (web, side)");
        assertThat(task("odd", "web").getRestarts()).isZero();

        annotate("odd", "2026-01-01T00:04:00Z");
        awaitRestarts("odd", 1, 1);
    }

    void awaitWarning(String text) {
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(client.v1()
                                .events()
                                .inNamespace("default")
                                .list()
                                .getItems())
                        .filteredOn(e -> "RestartNotDone".equals(e.getReason()))
                        .anySatisfy(e -> {
                            assertThat(e.getType()).isEqualTo("Warning");
                            assertThat(e.getMessage()).contains(text);
                        })
                        .extracting(Event::getInvolvedObject)
                        .allSatisfy(o -> assertThat(o.getName()).isEqualTo("odd")));
    }
}
