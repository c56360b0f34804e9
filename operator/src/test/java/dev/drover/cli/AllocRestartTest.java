package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code kubectl drover restart}: what it sets on the allocation, against fabric8's CRUD mock. */
class AllocRestartTest {

    static final InstantSource NOW = InstantSource.fixed(Instant.parse("2026-11-25T19:40:00.250Z"));

    MockApi api;
    KubernetesClient client;
    final ByteArrayOutputStream out = new ByteArrayOutputStream();

    @BeforeEach
    void start() throws Exception {
        api = new MockApi();
        client = api.client();
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("hello")
                .withNamespace("team-a")
                .withAnnotations(Map.of("owner", "bob"))
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("node-1");
        Task web = new Task();
        web.setName("web");
        web.setDriver("mock");
        Task db = new Task();
        db.setName("db");
        db.setDriver("mock");
        spec.setTasks(List.of(web, db));
        a.setSpec(spec);
        client.resource(a).create();
    }

    @AfterEach
    void stop() {
        api.close();
    }

    Map<String, String> annotations() {
        return client.resources(Allocation.class)
                .inNamespace("team-a")
                .withName("hello")
                .get()
                .getMetadata()
                .getAnnotations();
    }

    void restart(String alloc, String task) throws CommandFailure {
        AllocRestart.run(client, alloc, task, "team-a", NOW, new PrintStream(out, true, StandardCharsets.UTF_8));
    }

    @Test
    void restartSetsTheTimeNowAndKeepsTheOtherAnnotations() throws Exception {
        restart("hello", null);
        assertThat(annotations())
                .containsEntry("drover.dev/restartedAt", "2026-11-25T19:40:00.250Z")
                .containsEntry("owner", "bob");
        assertThat(out.toString(StandardCharsets.UTF_8))
                .isEqualTo("allocation team-a/hello: restart of every running task requested"
                        + " (drover.dev/restartedAt=2026-11-25T19:40:00.250Z)\n");
    }

    @Test
    void aNamedTaskGoesBeforeTheTime() throws Exception {
        restart("hello", "db");
        assertThat(annotations()).containsEntry("drover.dev/restartedAt", "db@2026-11-25T19:40:00.250Z");
    }

    @Test
    void aTaskTheAllocationLacksOrAMissingAllocationChangesNothing() {
        assertThatThrownBy(() -> restart("hello", "cache"))
                .isInstanceOf(CommandFailure.class)
                .hasMessage("allocation team-a/hello has no task cache (its tasks: web, db)");
        assertThat(annotations()).doesNotContainKey("drover.dev/restartedAt");
        assertThatThrownBy(() -> restart("nope", null))
                .isInstanceOf(CommandFailure.class)
                .hasMessage("allocation team-a/nope not found");
    }

    @Test
    void hostileTextIsEscapedInTheMergePatch() {
        assertThat(AllocRestart.mergePatch("a\"}, \"spec\": {\"x", "eve\""))
                .isEqualTo(
                        "{\"metadata\":{\"annotations\":{\"drover.dev/restartedAt\":\"a\\\"}, \\\"spec\\\": {\\\"x\","
                                + "\"drover.dev/restartedBy\":\"eve\\\"\"}}}");
    }

    @Test
    void aRestartedByLeftByAnEarlierRestartIsRemovedWhenTheServerCannotSayWhoAsks() throws Exception {
        // fabric8's CRUD mock answers a SelfSubjectReview without status.userInfo, as an API server older than 1.28
        // answers none: the name left by bob's restart must not be repeated as the asker of this one
        client.resources(Allocation.class)
                .inNamespace("team-a")
                .withName("hello")
                .edit(a -> {
                    a.getMetadata().getAnnotations().put("drover.dev/restartedBy", "bob");
                    return a;
                });
        restart("hello", null);
        assertThat(annotations()).containsEntry("drover.dev/restartedAt", "2026-11-25T19:40:00.250Z");
        assertThat(annotations().get("drover.dev/restartedBy"))
                .as("removed (the CRUD mock keeps a null where an API server removes the key)")
                .isNull();
    }
}
