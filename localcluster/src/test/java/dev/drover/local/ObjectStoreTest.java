package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The registry rules clients depend on, checked on the store directly. */
class ObjectStoreTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ResourceType CONFIG_MAPS = Catalog.BUILT_IN.stream()
            .filter(t -> t.plural().equals("configmaps"))
            .findFirst()
            .orElseThrow();
    private static final ResourceType WIDGETS = new ResourceType(
            "example.com",
            "v1",
            "widgets",
            "widget",
            "Widget",
            true,
            List.of(),
            List.of(),
            true,
            null,
            List.of(),
            List.of());

    private ObjectStore store;

    @BeforeEach
    void setUp() {
        store = new ObjectStore(Clock.systemUTC(), 5);
        store.create(Catalog.NAMESPACES, null, object("default", null), false);
    }

    @Test
    void aWatchFromAVersionGetsEveryLaterChangeAndNothingEarlier() throws Exception {
        store.create(CONFIG_MAPS, "default", object("before", "default"), false);
        long listed = store.list(CONFIG_MAPS, "default").revision();
        store.create(CONFIG_MAPS, "default", object("between", "default"), false); // after the list, before the watch
        try (ObjectStore.Watch watch = store.watch(CONFIG_MAPS, "default", listed)) {
            store.delete(CONFIG_MAPS, "default", "between", false);
            List<String> seen = new ArrayList<>();
            for (ObjectStore.Change c; (c = watch.poll(100)) != null; ) {
                seen.add(c.type() + " "
                        + c.object().path("metadata").path("name").asText());
            }
            assertThat(seen).containsExactly("ADDED between", "DELETED between");
        }
    }

    @Test
    void aDeletionIsANewVersion() {
        ObjectNode created = store.create(CONFIG_MAPS, "default", object("x", "default"), false);
        ObjectNode gone = store.delete(CONFIG_MAPS, "default", "x", false);
        assertThat(version(gone)).isGreaterThan(version(created));
    }

    @Test
    void aWatchFromBeforeTheKeptHistoryIsGone() {
        long start = store.revision();
        for (int i = 0; i < 10; i++) {
            store.create(CONFIG_MAPS, "default", object("cm-" + i, "default"), false);
        }
        assertThatThrownBy(() -> store.watch(CONFIG_MAPS, "default", start))
                .isInstanceOfSatisfying(
                        ApiFront.ApiError.class, e -> assertThat(e.code).isEqualTo(410));
    }

    @Test
    void aWriteFromAStaleVersionConflicts() {
        ObjectNode created = store.create(CONFIG_MAPS, "default", object("x", "default"), false);
        store.update(CONFIG_MAPS, "default", "x", false, o -> o.put("data", "changed"), false);
        assertThatThrownBy(() -> store.update(CONFIG_MAPS, "default", "x", false, o -> created.deepCopy(), false))
                .isInstanceOfSatisfying(
                        ApiFront.ApiError.class, e -> assertThat(e.code).isEqualTo(409));
    }

    @Test
    void aWriteThatChangesNothingIsNoNewVersion() {
        ObjectNode created = store.create(CONFIG_MAPS, "default", object("x", "default"), false);
        ObjectNode same = store.update(CONFIG_MAPS, "default", "x", false, o -> o, false);
        assertThat(version(same)).isEqualTo(version(created));
    }

    @Test
    void namesARealServerRefusesAreRefusedWithItsMessage() {
        assertThatThrownBy(() -> store.create(WIDGETS, "default", object("a".repeat(254), null), false))
                .isInstanceOfSatisfying(ApiFront.ApiError.class, e -> {
                    assertThat(e.code).isEqualTo(422);
                    assertThat(e.getMessage())
                            .startsWith("Widget.example.com \"" + "a".repeat(254) + "\" is invalid: metadata.name:"
                                    + " Invalid value: \"" + "a".repeat(254) + "\": must be no more than 253"
                                    + " characters");
                });
        assertThatThrownBy(() -> store.create(WIDGETS, "default", object("héllo-ünïcode", null), false))
                .isInstanceOfSatisfying(
                        ApiFront.ApiError.class,
                        e -> assertThat(e.getMessage())
                                .isEqualTo(
                                        "Widget.example.com \"héllo-ünïcode\" is invalid: metadata.name: Invalid value:"
                                                + " \"héllo-ünïcode\": a lowercase RFC 1123 subdomain must consist of lower case"
                                                + " alphanumeric characters, '-' or '.', and must start and end with an alphanumeric"
                                                + " character (e.g. 'example.com', regex used for validation is"
                                                + " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"));
        assertThatThrownBy(() -> store.create(CONFIG_MAPS, "default", object("Upper", null), false))
                .isInstanceOfSatisfying(
                        ApiFront.ApiError.class,
                        e -> assertThat(e.getMessage())
                                .startsWith("ConfigMap \"Upper\" is invalid: metadata.name: Invalid value: \"Upper\""));
        assertThat(store.list(WIDGETS, "default").items()).isEmpty();
    }

    @Test
    void aNamespaceIsALabelAndALongestSubdomainIsAName() {
        assertThatThrownBy(() -> store.create(Catalog.NAMESPACES, null, object("team.a", null), false))
                .isInstanceOfSatisfying(
                        ApiFront.ApiError.class,
                        e -> assertThat(e.getMessage())
                                .isEqualTo("Namespace \"team.a\" is invalid: metadata.name: Invalid value: \"team.a\":"
                                        + " must not contain dots"));
        String longest = ("a".repeat(63) + ".").repeat(3) + "a".repeat(61);
        assertThat(longest).hasSize(253);
        assertThat(store.create(WIDGETS, "default", object(longest, null), false)
                        .path("metadata")
                        .path("name")
                        .asText())
                .isEqualTo(longest);
    }

    @Test
    void theWatchHistoryIsBoundedInBytesNotOnlyInChanges() {
        ObjectStore roomy = new ObjectStore(Clock.systemUTC(), 1000);
        roomy.create(Catalog.NAMESPACES, null, object("default", null), false);
        long first = roomy.revision();
        for (int i = 0; i < 80; i++) { // 160 changes of half a MiB: more than the history keeps in bytes
            ObjectNode big = object("big", null);
            big.putObject("data").put("blob", "x".repeat(1 << 19));
            roomy.create(CONFIG_MAPS, "default", big, false);
            roomy.delete(CONFIG_MAPS, "default", "big", false);
        }
        assertThatThrownBy(() -> roomy.watch(CONFIG_MAPS, "default", first))
                .isInstanceOfSatisfying(
                        ApiFront.ApiError.class, e -> assertThat(e.code).isEqualTo(410));
        assertThat(roomy.watch(CONFIG_MAPS, "default", roomy.revision() - 2)).isNotNull();
    }

    @Test
    void objectsNeedTheirNamespace() {
        assertThatThrownBy(() -> store.create(CONFIG_MAPS, "missing", object("x", null), false))
                .isInstanceOfSatisfying(
                        ApiFront.ApiError.class, e -> assertThat(e.code).isEqualTo(404));
    }

    @Test
    void statusIsASubresourceAndGenerationCountsSpecChanges() {
        ObjectNode w = object("w", "default");
        w.putObject("spec").put("size", 1);
        w.putObject("status").put("phase", "made up by the client");
        ObjectNode created = store.create(WIDGETS, "default", w, false);
        assertThat(created.has("status")).isFalse();

        ObjectNode statused = store.update(
                WIDGETS,
                "default",
                "w",
                true,
                o -> {
                    o.putObject("status").put("phase", "Ready");
                    o.withObjectProperty("spec").put("size", 99); // ignored through /status
                    return o;
                },
                false);
        assertThat(statused.path("status").path("phase").asText()).isEqualTo("Ready");
        assertThat(statused.path("spec").path("size").asInt()).isEqualTo(1);
        assertThat(statused.path("metadata").path("generation").asLong()).isEqualTo(1);

        ObjectNode resized = store.update(
                WIDGETS,
                "default",
                "w",
                false,
                o -> {
                    o.withObjectProperty("spec").put("size", 2);
                    o.remove("status"); // ignored through the main resource
                    return o;
                },
                false);
        assertThat(resized.path("metadata").path("generation").asLong()).isEqualTo(2);
        assertThat(resized.path("status").path("phase").asText()).isEqualTo("Ready");
    }

    @Test
    void finalizersHoldADeletionUntilTheLastGoes() {
        ObjectNode w = object("w", "default");
        w.withObjectProperty("metadata").putArray("finalizers").add("example.com/f");
        store.create(WIDGETS, "default", w, false);
        ObjectNode marked = store.delete(WIDGETS, "default", "w", false);
        assertThat(marked.path("metadata").has("deletionTimestamp")).isTrue();
        assertThat(store.list(WIDGETS, "default").items()).hasSize(1);

        store.update(
                WIDGETS,
                "default",
                "w",
                false,
                o -> {
                    o.withObjectProperty("metadata").remove("finalizers");
                    return o;
                },
                false);
        assertThat(store.list(WIDGETS, "default").items()).isEmpty();
    }

    @Test
    void deletingANamespaceDeletesWhatItHolds() {
        store.create(Catalog.NAMESPACES, null, object("team", null), false);
        store.create(CONFIG_MAPS, "team", object("x", "team"), false);
        store.create(CONFIG_MAPS, "default", object("y", "default"), false);
        store.delete(Catalog.NAMESPACES, null, "team", false);
        assertThat(store.list(CONFIG_MAPS, null).items())
                .extracting(o -> o.path("metadata").path("name").asText())
                .containsExactly("y");
    }

    @Test
    void labelSelectorsMatchAsKubectlWritesThem() {
        ObjectNode o = object("x", "default");
        o.withObjectProperty("metadata").putObject("labels").put("app", "web").put("tier", "front");
        assertThat(LabelSelector.parse("app=web,tier in (front, back)").matches(o))
                .isTrue();
        assertThat(LabelSelector.parse("app!=web").matches(o)).isFalse();
        assertThat(LabelSelector.parse("!gone,app").matches(o)).isTrue();
        assertThat(LabelSelector.parse("tier notin (front)").matches(o)).isFalse();
        assertThatThrownBy(() -> LabelSelector.parse("app=web,,x")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aSecretsStringDataIsStoredAsDataAndNeverItself() {
        ObjectNode secret = object("db", "default");
        secret.putObject("data").put("user", "YWRtaW4=").put("password", "b2xk");
        secret.putObject("stringData").put("password", "new\n");

        store.create(Catalog.SECRETS, "default", secret, false);

        ObjectNode stored = store.get(Catalog.SECRETS, "default", "db");
        assertThat(stored.has("stringData")).isFalse();
        assertThat(stored.path("data").path("user").asText()).isEqualTo("YWRtaW4=");
        assertThat(stored.path("data").path("password").asText()).isEqualTo("bmV3Cg==");

        store.update(
                Catalog.SECRETS,
                "default",
                "db",
                false,
                s -> {
                    s.putObject("stringData").put("user", "root");
                    return s;
                },
                false);
        stored = store.get(Catalog.SECRETS, "default", "db");
        assertThat(stored.has("stringData")).isFalse();
        assertThat(stored.path("data").path("user").asText()).isEqualTo("cm9vdA==");
    }

    @Test
    void aSecretOfMoreThanOneMebibyteIsInvalid() {
        ObjectNode secret = object("big", "default");
        secret.putObject("stringData")
                .put("a", "x".repeat(SecretData.MAX_BYTES / 2))
                .put("b", "x".repeat(SecretData.MAX_BYTES / 2 + 1));

        assertThatThrownBy(() -> store.create(Catalog.SECRETS, "default", secret, false))
                .isInstanceOfSatisfying(
                        ApiFront.ApiError.class,
                        e -> assertThat(e.getMessage())
                                .isEqualTo(
                                        "Secret \"big\" is invalid: data: Too long: must have at most 1048576 bytes"));
    }

    private static ObjectNode object(String name, String namespace) {
        ObjectNode o = JSON.createObjectNode();
        ObjectNode meta = o.putObject("metadata").put("name", name);
        if (namespace != null) {
            meta.put("namespace", namespace);
        }
        return o;
    }

    private static long version(ObjectNode o) {
        return Long.parseLong(o.path("metadata").path("resourceVersion").asText());
    }
}
