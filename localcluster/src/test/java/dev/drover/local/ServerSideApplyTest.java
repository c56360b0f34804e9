package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Server-side apply's merge, ownership and conflicts on the Allocation schema. */
class ServerSideApplyTest {

    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final Instant NOW = Instant.parse("2026-11-28T10:00:00.500Z");
    static final ResourceType ALLOCATIONS = allocations();

    static ResourceType allocations() {
        try (InputStream in =
                ServerSideApplyTest.class.getClassLoader().getResourceAsStream(LocalApiServer.DROVER_CRD)) {
            JsonNode crd = YAML.readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            JsonNode schema = crd.at("/spec/versions/0/schema/openAPIV3Schema");
            return new ResourceType(
                    "drover.dev",
                    "v1alpha1",
                    "allocations",
                    "allocation",
                    "Allocation",
                    true,
                    List.of(),
                    List.of(),
                    true,
                    schema,
                    List.of(),
                    List.of());
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static ObjectNode config(String tasks) {
        try {
            return (ObjectNode) YAML.readTree("""
                    apiVersion: drover.dev/v1alpha1
                    kind: Allocation
                    metadata: {name: shared, namespace: default}
                    spec:
                      nodeName: local
                      tasks:
                    %s""".formatted(tasks.indent(2)));
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static ObjectNode apply(ObjectNode live, String manager, String tasks) {
        return ServerSideApply.apply(ALLOCATIONS, live, config(tasks), manager, false, null, NOW);
    }

    static List<String> taskNames(JsonNode object) {
        return object.path("spec").path("tasks").findValuesAsText("name");
    }

    static JsonNode entry(JsonNode object, String manager) {
        for (JsonNode e : object.path("metadata").path("managedFields")) {
            if (e.path("manager").asText().equals(manager)) {
                return e;
            }
        }
        return null;
    }

    @Test
    void applyRecordsWhatTheManagerSetAsFieldsV1() {
        ObjectNode created = apply(null, "alice", "- {name: a, driver: mock, config: {runFor: 1h}}");
        JsonNode e = entry(created, "alice");
        assertThat(e.path("operation").asText()).isEqualTo("Apply");
        assertThat(e.path("apiVersion").asText()).isEqualTo("drover.dev/v1alpha1");
        assertThat(e.path("fieldsType").asText()).isEqualTo("FieldsV1");
        assertThat(e.path("time").asText()).isEqualTo("2026-11-28T10:00:00Z");
        assertThat(e.has("subresource")).isFalse();
        JsonNode task = e.path("fieldsV1").path("f:spec").path("f:tasks").path("k:{\"name\":\"a\"}");
        assertThat(task.has(".")).as("the item itself is owned").isTrue();
        assertThat(task.has("f:name")).isTrue();
        assertThat(task.path("f:config").has("f:runFor")).isTrue();
        assertThat(e.path("fieldsV1").path("f:spec").has("f:nodeName")).isTrue();
        assertThat(e.path("fieldsV1").path("f:metadata").has("f:name"))
                .as("the server's metadata is no one's")
                .isFalse();
    }

    @Test
    void twoManagersApplyingDifferentTasksKeepBoth() {
        ObjectNode live = apply(null, "alice", "- {name: a, driver: mock, config: {runFor: 1h}}");
        live = apply(live, "bob", "- {name: b, driver: mock}");
        assertThat(taskNames(live)).containsExactly("a", "b");
        live = apply(live, "alice", "- {name: a, driver: mock, config: {runFor: 2h}}");
        assertThat(taskNames(live)).as("alice's new apply keeps bob's task").containsExactly("a", "b");
        assertThat(live.at("/spec/tasks/0/config/runFor").asText()).isEqualTo("2h");
        assertThat(entry(live, "bob").path("fieldsV1").toString()).contains("k:{\\\"name\\\":\\\"b\\\"}");
    }

    @Test
    void whatAManagerNoLongerAppliesIsRemovedUnlessAnotherOwnsIt() {
        ObjectNode live = apply(null, "alice", "- {name: a, driver: mock}\n- {name: b, driver: mock}");
        ObjectNode dropped = apply(live, "alice", "- {name: a, driver: mock}");
        assertThat(taskNames(dropped)).containsExactly("a");
        assertThat(entry(dropped, "alice").path("fieldsV1").toString()).doesNotContain("\\\"b\\\"");

        ObjectNode shared = apply(live, "bob", "- {name: b, driver: mock}");
        shared = apply(shared, "alice", "- {name: a, driver: mock}");
        assertThat(taskNames(shared)).as("bob applied b too: it stays").containsExactly("a", "b");
    }

    @Test
    void changingAValueAnotherManagerOwnsIsAConflictUnlessForced() {
        ObjectNode live = apply(null, "alice", "- {name: a, driver: mock, config: {runFor: 1h}}");
        assertThatThrownBy(() -> apply(live, "bob", "- {name: a, driver: mock, config: {runFor: 5m}}"))
                .isInstanceOfSatisfying(ServerSideApply.ApplyConflict.class, c -> {
                    assertThat(c.code).isEqualTo(409);
                    assertThat(c.reason).isEqualTo("Conflict");
                    assertThat(c.causes)
                            .extracting(n -> n.path("field").asText())
                            .containsExactly(".spec.tasks[name=\"a\"].config.runFor");
                })
                .hasMessage("Apply failed with 1 conflict: conflict with \"alice\" using drover.dev/v1alpha1:"
                        + " .spec.tasks[name=\"a\"].config.runFor");

        ObjectNode sameValue = apply(live, "bob", "- {name: a, driver: mock, config: {runFor: 1h}}");
        assertThat(entry(sameValue, "bob"))
                .as("the same value is no conflict: both own it")
                .isNotNull();
        assertThat(entry(sameValue, "alice").path("fieldsV1").toString()).contains("f:runFor");

        ObjectNode forced = ServerSideApply.apply(
                ALLOCATIONS, live, config("- {name: a, driver: mock, config: {runFor: 5m}}"), "bob", true, null, NOW);
        assertThat(forced.at("/spec/tasks/0/config/runFor").asText()).isEqualTo("5m");
        assertThat(entry(forced, "alice").path("fieldsV1").toString())
                .as("force takes the field over")
                .doesNotContain("f:runFor")
                .contains("f:driver");
    }

    @Test
    void turningAnotherManagersScalarIntoAnObjectIsAConflict() {
        ObjectNode live = apply(null, "alice", "- {name: a, driver: mock, config: {foo: 1}}");
        assertThatThrownBy(() -> apply(live, "bob", "- {name: a, driver: mock, config: {foo: {bar: 1}}}"))
                .isInstanceOf(ServerSideApply.ApplyConflict.class)
                .hasMessage("Apply failed with 1 conflict: conflict with \"alice\" using drover.dev/v1alpha1:"
                        + " .spec.tasks[name=\"a\"].config.foo");
        ObjectNode nested = apply(null, "alice", "- {name: a, driver: mock, config: {foo: {bar: 1}}}");
        assertThatThrownBy(() -> apply(nested, "bob", "- {name: a, driver: mock, config: {foo: 1}}"))
                .as("and the reverse")
                .hasMessageContaining("conflict with \"alice\"");
        ObjectNode forced = ServerSideApply.apply(
                ALLOCATIONS,
                live,
                config("- {name: a, driver: mock, config: {foo: {bar: 1}}}"),
                "bob",
                true,
                null,
                NOW);
        assertThat(forced.at("/spec/tasks/0/config/foo/bar").asInt()).isEqualTo(1);
        assertThat(entry(forced, "alice").path("fieldsV1").toString()).doesNotContain("f:foo");
    }

    @Test
    void anAtomicListIsOwnedAndReplacedWhole() {
        ObjectNode live = apply(null, "alice", "- {name: a, driver: mock, config: {args: [x, y]}}");
        assertThatThrownBy(() -> apply(live, "bob", "- {name: a, driver: mock, config: {args: [z]}}"))
                .hasMessageContaining(".spec.tasks[name=\"a\"].config.args");
        ObjectNode mine = apply(live, "alice", "- {name: a, driver: mock, config: {args: [z]}}");
        assertThat(mine.at("/spec/tasks/0/config/args").toString()).isEqualTo("[\"z\"]");
    }

    @Test
    void anOrdinaryWriteTakesTheFieldsItChangesAndTheApplierThenConflictsWithIt() {
        ObjectNode live = apply(null, "alice", "- {name: a, driver: mock, config: {runFor: 1h}}");
        ObjectNode edited = live.deepCopy();
        ((ObjectNode) edited.at("/spec/tasks/0/config")).put("runFor", "3h");
        ManagedFields.recordUpdate(ALLOCATIONS, live, edited, "kubectl-edit", null, NOW);
        JsonNode edit = entry(edited, "kubectl-edit");
        assertThat(edit.path("operation").asText()).isEqualTo("Update");
        assertThat(edit.path("fieldsV1").toString()).contains("f:runFor").doesNotContain("f:driver");
        assertThat(entry(edited, "alice").path("fieldsV1").toString()).doesNotContain("f:runFor");
        assertThatThrownBy(() -> apply(edited, "alice", "- {name: a, driver: mock, config: {runFor: 1h}}"))
                .hasMessageContaining("conflict with \"kubectl-edit\"");
    }

    @Test
    void statusWritesOwnOnlyStatusAndApplyThroughTheMainResourceIgnoresStatus() {
        ObjectNode applied = ServerSideApply.apply(
                ALLOCATIONS,
                null,
                (ObjectNode) config("- {name: a, driver: mock}")
                        .set("status", YAML.createObjectNode().put("ready", "9/9")),
                "alice",
                false,
                null,
                NOW);
        assertThat(applied.has("status")).isFalse();
        ObjectNode withStatus = applied.deepCopy();
        withStatus.putObject("status").put("clientStatus", "Running");
        ManagedFields.recordUpdate(ALLOCATIONS, applied, withStatus, "drover-agent", "status", NOW);
        JsonNode agent = entry(withStatus, "drover-agent");
        assertThat(agent.path("subresource").asText()).isEqualTo("status");
        assertThat(agent.path("fieldsV1").toString()).contains("f:clientStatus").doesNotContain("f:spec");
        ObjectNode again = apply(withStatus, "alice", "- {name: a, driver: mock}");
        assertThat(again.path("status").path("clientStatus").asText())
                .as("re-applying leaves the agent's status")
                .isEqualTo("Running");
        assertThat(again.path("metadata").path("managedFields"))
                .isEqualTo(withStatus.path("metadata").path("managedFields"));
    }

    @Test
    void manyWritersCannotGrowManagedFieldsPastTheCap() {
        ObjectNode live = apply(null, "alice", "- {name: a, driver: mock}");
        for (int i = 0; i < 15; i++) {
            ObjectNode next = live.deepCopy();
            next.withObjectProperty("metadata").withObjectProperty("labels").put("l" + i, "v");
            live = ManagedFields.recordUpdate(ALLOCATIONS, live, next, "writer-" + i, null, NOW.plusSeconds(i));
        }
        List<String> managers = live.path("metadata").path("managedFields").findValuesAsText("manager");
        assertThat(managers)
                .hasSize(ManagedFields.MAX_UPDATE_ENTRIES + 1)
                .contains("alice", "ancient-changes", "writer-14");
        assertThat(managers).doesNotContain("writer-0", "writer-5");
        assertThat(entry(live, "ancient-changes")
                        .path("fieldsV1")
                        .path("f:metadata")
                        .path("f:labels")
                        .has("f:l0"))
                .isTrue();
    }

    @Test
    void anOrdinaryWriteIsRecordedAsItsFieldManagerOrItsUserAgentsProduct() {
        assertThat(FieldManagers.forUpdate(Query.parse("fieldManager=ci"), "kubectl-edit/v1.32.0 (linux/amd64)"))
                .isEqualTo("ci");
        assertThat(FieldManagers.forUpdate(Query.parse(""), "kubectl-edit/v1.32.0 (linux/amd64) kubernetes/abc"))
                .isEqualTo("kubectl-edit");
        assertThat(FieldManagers.forUpdate(Query.parse(""), null)).isEqualTo("unknown");
        assertThatThrownBy(() -> FieldManagers.forApply(Query.parse("force=true")))
                .hasMessageContaining("fieldManager is required");
        assertThatThrownBy(() -> FieldManagers.force(Query.parse("force=true"), false))
                .hasMessageContaining("may not be specified for non-apply patch");
        assertThatThrownBy(() -> FieldManagers.forUpdate(Query.parse("fieldManager=" + "m".repeat(129)), null))
                .hasMessageContaining("at most 128");
    }

    @Test
    void fieldsV1RoundTripsAndPathsReadAsTheServerWritesThem() throws Exception {
        JsonNode fields = YAML.readTree(
                "{\"f:spec\": {\"f:tasks\": {\"k:{\\\"name\\\":\\\"web\\\"}\": {\".\": {}, \"f:name\": {}}}}}");
        FieldSet set = FieldSet.fromFieldsV1(fields);
        assertThat(set.toFieldsV1()).isEqualTo(fields);
        assertThat(set.paths())
                .extracting(FieldSet::pathText)
                .containsExactly(".spec.tasks[name=\"web\"]", ".spec.tasks[name=\"web\"].name");
        assertThatThrownBy(() -> FieldSet.fromFieldsV1(YAML.readTree("{\"spec\": {}}")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** {@code {spec: {tasks: [...]}}} with tasks named {@code prefix}0 to {@code prefix}(n-1). */
    static ObjectNode manyTasks(String prefix, int n) {
        ObjectNode object = YAML.createObjectNode();
        var tasks = object.putObject("spec").putArray("tasks");
        for (int i = 0; i < n; i++) {
            tasks.addObject().put("name", prefix + i).put("driver", "mock");
        }
        return object;
    }

    @Test
    void mergingAndDroppingLargeListMapsIsLinear() {
        TypedFields typed = new TypedFields(ALLOCATIONS.schema());
        ObjectNode live = manyTasks("t", 20_000);
        ObjectNode config = manyTasks("t", 20_000);
        config.at("/spec/tasks/19999").withObjectProperty("config").put("runFor", "1h");
        ((com.fasterxml.jackson.databind.node.ArrayNode) config.at("/spec/tasks"))
                .addObject()
                .put("name", "new");
        // a scan of the list per item (n² key comparisons, each re-reading the key) took minutes here; linear, this is
        // well under a second on an idle machine
        JsonNode merged = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> typed.merge(live, config));
        assertThat(merged.at("/spec/tasks").size()).isEqualTo(20_001);
        assertThat(merged.at("/spec/tasks/19999/config/runFor").asText()).isEqualTo("1h");
        assertThat(assertTimeoutPreemptively(Duration.ofSeconds(5), () -> typed.changed(live, merged))
                        .paths())
                .extracting(FieldSet::pathText)
                .containsExactly(
                        ".spec.tasks[name=\"t19999\"].config.runFor",
                        ".spec.tasks[name=\"new\"]",
                        ".spec.tasks[name=\"new\"].name");

        List<List<String>> odd = new java.util.ArrayList<>();
        for (int i = 1; i < 20_000; i += 2) {
            odd.add(List.of("f:spec", "f:tasks", "k:{\"name\":\"t" + i + "\"}"));
        }
        assertTimeoutPreemptively(Duration.ofSeconds(5), () -> TypedFields.removeAll(live, odd));
        assertThat(taskNames(live)).hasSize(10_000).startsWith("t0", "t2", "t4").endsWith("t19998");
    }
}
