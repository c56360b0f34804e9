package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.Task;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The local API server through the fabric8 client, as Drover's agent uses it. */
class LocalApiServerTest {

    static LocalApiServer server;
    static KubernetesClient client;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults().withNodes(List.of("a", "b")));
        client = server.client();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static MixedOperation<
                    Allocation,
                    io.fabric8.kubernetes.api.model.KubernetesResourceList<Allocation>,
                    Resource<Allocation>>
            allocs() {
        return client.resources(Allocation.class);
    }

    static Allocation alloc(String name, String node) {
        Allocation a = new Allocation();
        a.setMetadata(
                new ObjectMetaBuilder().withName(name).withNamespace("default").build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(node);
        Task t = new Task();
        t.setName("web");
        t.setDriver("mock");
        t.setConfig(Map.of("runFor", "1h"));
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return a;
    }

    @Test
    void createAppliesSchemaDefaultsAndStartsAtGenerationOne() {
        Allocation created =
                allocs().inNamespace("default").resource(alloc("defaults", "a")).create();
        assertThat(created.getMetadata().getGeneration()).isEqualTo(1L);
        assertThat(created.getSpec().getDesiredStatus()).isEqualTo(DesiredStatus.Run);
        assertThat(created.getSpec().getType()).isNotNull();
    }

    @Test
    void statusPatchChangesOnlyStatusAndMainPatchNeverChangesStatus() {
        allocs().inNamespace("default").resource(alloc("status-rules", "a")).create();
        Allocation withStatus =
                allocs().inNamespace("default").withName("status-rules").get();
        AllocationStatus status = new AllocationStatus();
        status.setClientStatus(ClientStatus.Running);
        withStatus.setStatus(status);
        Allocation patched =
                allocs().inNamespace("default").resource(withStatus).patchStatus();
        assertThat(patched.getStatus().getClientStatus()).isEqualTo(ClientStatus.Running);
        assertThat(patched.getMetadata().getGeneration()).isEqualTo(1L);

        Allocation edited = allocs().inNamespace("default")
                .withName("status-rules")
                .patch(
                        PatchContext.of(PatchType.JSON_MERGE),
                        "{\"spec\":{\"desiredStatus\":\"Stop\"},\"status\":{\"clientStatus\":\"Failed\"}}");
        assertThat(edited.getSpec().getDesiredStatus()).isEqualTo(DesiredStatus.Stop);
        assertThat(edited.getMetadata().getGeneration()).isEqualTo(2L);
        assertThat(allocs().inNamespace("default")
                        .withName("status-rules")
                        .get()
                        .getStatus()
                        .getClientStatus())
                .isEqualTo(ClientStatus.Running);
    }

    @Test
    void fieldSelectorOnNodeNameFiltersLists() {
        allocs().inNamespace("default").resource(alloc("on-a", "a")).create();
        allocs().inNamespace("default").resource(alloc("on-b", "b")).create();
        List<Allocation> onB =
                allocs().inAnyNamespace().withField("spec.nodeName", "b").list().getItems();
        assertThat(onB)
                .extracting(x -> x.getMetadata().getName())
                .contains("on-b")
                .doesNotContain("on-a");
        assertThat(onB).allSatisfy(x -> assertThat(x.getSpec().getNodeName()).isEqualTo("b"));
    }

    @Test
    void httpWatchStreamsChangesMatchingTheFieldSelector() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        try (var _ = allocs().inNamespace("default")
                .withField("spec.nodeName", "b")
                .watch(new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, Allocation resource) {
                        seen.add(action + " " + resource.getMetadata().getName());
                    }

                    @Override
                    public void onClose(WatcherException cause) {}
                })) {
            allocs().inNamespace("default").resource(alloc("watch-a", "a")).create();
            allocs().inNamespace("default").resource(alloc("watch-b", "b")).create();
            await().atMost(Duration.ofSeconds(10)).until(() -> seen.contains("ADDED watch-b"));
            assertThat(seen).doesNotContain("ADDED watch-a");
        }
    }

    /** As a real API server: an object leaving a watch's field selection is DELETED for it, one entering ADDED. */
    @Test
    void anObjectLeavingTheSelectionIsDeletedForTheWatch() throws Exception {
        // a label: the node name, the selectable field, may not change (the CRD's CEL rule)
        List<String> seen = new CopyOnWriteArrayList<>();
        try (var _ = allocs().inNamespace("default").withLabel("lane", "fast").watch(new Watcher<>() {
            @Override
            public void eventReceived(Action action, Allocation resource) {
                seen.add(action + " " + resource.getMetadata().getName() + " "
                        + resource.getMetadata().getLabels().get("lane"));
            }

            @Override
            public void onClose(WatcherException cause) {}
        })) {
            Allocation mover = alloc("mover", "a");
            mover.getMetadata().setLabels(Map.of("lane", "fast"));
            allocs().inNamespace("default").resource(mover).create();
            await().atMost(Duration.ofSeconds(10)).until(() -> seen.contains("ADDED mover fast"));
            allocs().inNamespace("default").withName("mover").edit(x -> {
                x.getMetadata().setLabels(Map.of("lane", "slow"));
                return x;
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> seen.contains("DELETED mover slow"));
            allocs().inNamespace("default").withName("mover").edit(x -> {
                x.getMetadata().setLabels(Map.of("lane", "fast"));
                return x;
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() == 3);
            assertThat(seen).containsExactly("ADDED mover fast", "DELETED mover slow", "ADDED mover fast");
        }
    }

    /**
     * A matching event with others queued behind it that the selector drops must still reach the client at once
     * (it sat unflushed until the next matching change: kubectl wait and delete timed out in DevicesIT).
     */
    @Test
    void aMatchingEventFollowedOnlyByFilteredOnesIsSentAtOnce() throws Exception {
        String since = allocs().inNamespace("default").list().getMetadata().getResourceVersion();
        allocs().inNamespace("default").resource(alloc("flush-b", "b")).create();
        for (int i = 0; i < 20; i++) {
            allocs().inNamespace("default").resource(alloc("flush-a-" + i, "a")).create();
        }
        java.net.URI uri = server.url()
                .resolve("/apis/drover.dev/v1alpha1/namespaces/default/allocations?watch=true"
                        + "&timeoutSeconds=6&resourceVersion=" + since + "&fieldSelector=metadata.name%3Dflush-b");
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            long begin = System.nanoTime();
            var response = http.send(
                    HttpRequest.newBuilder(uri)
                            .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofLines());
            String first = response.body().findFirst().orElse("");
            assertThat(Duration.ofNanos(System.nanoTime() - begin))
                    .as("not held until the stream ends")
                    .isLessThan(Duration.ofSeconds(3));
            assertThat(first).contains("\"ADDED\"").contains("flush-b");
        }
    }

    /** A status message with non-ASCII text (the validator writes "attempts × delay") once broke the watch. */
    @Test
    void watchesCarryNonAsciiTextIntact() {
        String message = "attempts × delay ≥ interval; ünïcödé ✓ ".repeat(2000);
        List<String> messages = new CopyOnWriteArrayList<>();
        List<WatcherException> failures = new CopyOnWriteArrayList<>();
        try (var _ = allocs().inNamespace("default")
                .withField("metadata.name", "unicode")
                .watch(new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, Allocation resource) {
                        if (resource.getStatus() != null) {
                            messages.add(resource.getStatus().getClientDescription());
                        }
                    }

                    @Override
                    public void onClose(WatcherException cause) {
                        failures.add(cause);
                    }
                })) {
            allocs().inNamespace("default").resource(alloc("unicode", "a")).create();
            Allocation a = allocs().inNamespace("default").withName("unicode").get();
            AllocationStatus status = new AllocationStatus();
            status.setClientStatus(ClientStatus.Failed);
            status.setClientDescription(message);
            a.setStatus(status);
            allocs().inNamespace("default").resource(a).updateStatus();
            await().atMost(Duration.ofSeconds(10)).until(() -> !messages.isEmpty() || !failures.isEmpty());
            assertThat(failures).isEmpty();
            assertThat(messages).containsExactly(message);
        }
    }

    @Test
    void informerSeesUpdatesOverHttpWatches() {
        List<String> updates = new CopyOnWriteArrayList<>();
        SharedIndexInformer<Allocation> informer = allocs().inNamespace("default")
                .inform(new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Allocation obj) {
                        updates.add("add " + obj.getMetadata().getName());
                    }

                    @Override
                    public void onUpdate(Allocation oldObj, Allocation newObj) {
                        updates.add("update " + newObj.getMetadata().getName() + " "
                                + newObj.getMetadata().getGeneration());
                    }

                    @Override
                    public void onDelete(Allocation obj, boolean deletedFinalStateUnknown) {
                        updates.add("delete " + obj.getMetadata().getName());
                    }
                });
        try (informer) {
            allocs().inNamespace("default").resource(alloc("informed", "a")).create();
            allocs().inNamespace("default").withName("informed").edit(a -> {
                a.getSpec().setDesiredStatus(DesiredStatus.Stop);
                return a;
            });
            allocs().inNamespace("default").withName("informed").delete();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> updates.containsAll(List.of("add informed", "update informed 2", "delete informed")));
        }
    }

    @Test
    void clientBuiltFromTheKubeconfigAloneWatchesWithItsDefaults() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("drover-kubeconfig");
        java.nio.file.Path file = dir.resolve("config");
        Kubeconfig.write(file, server.url(), server.certificatePem());
        io.fabric8.kubernetes.client.Config config =
                io.fabric8.kubernetes.client.Config.fromKubeconfig(java.nio.file.Files.readString(file));
        assertThat(config.isOnlyHttpWatches()).isFalse(); // the default: websocket first
        List<String> seen = new CopyOnWriteArrayList<>();
        try (KubernetesClient plain = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                        .withHttpClientFactory(new io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory())
                        .withConfig(config)
                        .build();
                SharedIndexInformer<Allocation> _ = plain.resources(Allocation.class)
                        .inNamespace("default")
                        .inform(new ResourceEventHandler<>() {
                            @Override
                            public void onAdd(Allocation obj) {
                                seen.add("add " + obj.getMetadata().getName());
                            }

                            @Override
                            public void onUpdate(Allocation oldObj, Allocation newObj) {
                                seen.add("update " + newObj.getMetadata().getName() + " "
                                        + newObj.getMetadata().getGeneration());
                            }

                            @Override
                            public void onDelete(Allocation obj, boolean deletedFinalStateUnknown) {
                                seen.add("delete " + obj.getMetadata().getName());
                            }
                        })) {
            allocs().inNamespace("default").resource(alloc("plain-client", "a")).create();
            allocs().inNamespace("default").withName("plain-client").edit(a -> {
                a.getSpec().setDesiredStatus(DesiredStatus.Stop);
                return a;
            });
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> seen.containsAll(List.of("add plain-client", "update plain-client 2")));
        } finally {
            allocs().inNamespace("default").withName("plain-client").delete();
            java.nio.file.Files.deleteIfExists(file);
            java.nio.file.Files.deleteIfExists(dir);
        }
    }

    static io.fabric8.kubernetes.api.model.ConfigMap configMapOf(String name, int bytes) {
        return new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("default")
                .endMetadata()
                .addToData("blob", "x".repeat(bytes))
                .build();
    }

    @Test
    void anObjectOverEtcdsLimitIsRefusedAsARealServerRefusesIt() {
        assertThatThrownBy(() -> client.resource(configMapOf("big", 2 << 20)).create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(500);
                    assertThat(e.getMessage()).contains("etcdserver: request is too large");
                });
        assertThat(client.configMaps().inNamespace("default").withName("big").get())
                .isNull();

        client.resource(configMapOf("grows", 10)).create();
        assertThatThrownBy(() -> client.resource(configMapOf("grows", 2 << 20)).update())
                .isInstanceOf(KubernetesClientException.class);
        assertThat(client.configMaps()
                        .inNamespace("default")
                        .withName("grows")
                        .get()
                        .getData()
                        .get("blob"))
                .as("the object as it was")
                .hasSize(10);
    }

    @Test
    void aRequestBodyOverThreeMebibytesIsRefusedUnread() {
        assertThatThrownBy(() -> client.resource(configMapOf("huge", 4 << 20)).create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(413);
                    assertThat(e.getMessage()).contains("Request entity too large: limit is 3145728");
                });
    }

    @Test
    void aMalformedSelectorIsABadRequestForAWatchAsForAList() throws Exception {
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            for (String query : List.of("fieldSelector=spec.nodeName", "labelSelector=a%20in%20(")) {
                for (String watch : List.of("", "&watch=true")) {
                    URI uri = URI.create(
                            server.url() + "/apis/drover.dev/v1alpha1/namespaces/default/allocations?" + query + watch);
                    HttpResponse<String> response = http.send(
                            HttpRequest.newBuilder(uri)
                                    .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(response.statusCode()).as(query + watch).isEqualTo(400);
                }
            }
        }
    }

    @Test
    void deleteWaitsForFinalizers() {
        Allocation a = alloc("finalized", "a");
        a.getMetadata().setFinalizers(List.of("drover.dev/finalizer"));
        allocs().inNamespace("default").resource(a).create();
        allocs().inNamespace("default").withName("finalized").delete();
        Allocation marked =
                allocs().inNamespace("default").withName("finalized").get();
        assertThat(marked).isNotNull();
        assertThat(marked.getMetadata().getDeletionTimestamp()).isNotNull();

        allocs().inNamespace("default").withName("finalized").edit(x -> {
            x.getMetadata().setFinalizers(List.of());
            return x;
        });
        await().atMost(Duration.ofSeconds(5))
                .until(() ->
                        allocs().inNamespace("default").withName("finalized").get() == null);
    }

    @Test
    void strictFieldValidationRefusesUnknownFieldsWithTheirPath() throws Exception {
        String body = """
                {"apiVersion":"drover.dev/v1alpha1","kind":"Allocation","metadata":{"name":"strict"},
                 "spec":{"nodeName":"a","tasks":[{"name":"t","driver":"mock","leadr":true}]}}""";
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(
                                    URI.create(
                                            server.url()
                                                    + "/apis/drover.dev/v1alpha1/namespaces/default/allocations?fieldValidation=Strict"))
                            .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(400);
            assertThat(r.body()).contains("unknown field \\\"spec.tasks[0].leadr\\\"");
        }
    }

    @Test
    void invalidValuesAreRefusedEvenWithoutStrictValidation() {
        Allocation a = alloc("no-tasks", "a");
        a.getSpec().setTasks(List.of());
        assertThatThrownBy(() -> allocs().inNamespace("default").resource(a).create())
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("spec.tasks")
                .satisfies(e ->
                        assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422));
    }

    @Test
    void discoveryListsTheDroverResource() {
        var resources = client.getApiResources("drover.dev/v1alpha1").getResources();
        assertThat(resources).anySatisfy(r -> {
            assertThat(r.getName()).isEqualTo("allocations");
            assertThat(r.getShortNames()).containsExactly("alloc");
            assertThat(r.getCategories()).containsExactly("drover");
        });
        assertThat(resources).extracting(r -> r.getName()).contains("allocations/status");
        assertThat(client.nodes().list().getItems())
                .extracting(n -> n.getMetadata().getName())
                .contains("a", "b");
    }

    /** The kubeconfig's token reviews as the administrator, allowed everything; a guessed token proves nobody. */
    @Test
    void tokenAndAccessReviewsKnowTheKubeconfigsAdministrator() {
        var admin = client.authentication()
                .v1()
                .tokenReviews()
                .create(new io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder()
                        .withNewSpec()
                        .withToken("drover-local")
                        .endSpec()
                        .build());
        assertThat(admin.getStatus().getAuthenticated()).isTrue();
        assertThat(admin.getStatus().getUser().getUsername()).isEqualTo("drover-local-admin");
        var stranger = client.authentication()
                .v1()
                .tokenReviews()
                .create(new io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder()
                        .withNewSpec()
                        .withToken("guess")
                        .endSpec()
                        .build());
        assertThat(stranger.getStatus().getAuthenticated()).isNotEqualTo(Boolean.TRUE);
        assertThat(stranger.getStatus().getError()).startsWith("[invalid bearer token");
        var allowed = client.authorization()
                .v1()
                .subjectAccessReview()
                .create(new io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder()
                        .withNewSpec()
                        .withUser("drover-local-admin")
                        .withGroups("system:masters", "system:authenticated")
                        .withNewResourceAttributes()
                        .withGroup("drover.dev")
                        .withResource("allocations")
                        .withSubresource("log")
                        .withVerb("get")
                        .withNamespace("default")
                        .endResourceAttributes()
                        .endSpec()
                        .build());
        assertThat(allowed.getStatus().getAllowed()).isTrue();
        var denied = client.authorization()
                .v1()
                .subjectAccessReview()
                .create(new io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder()
                        .withNewSpec()
                        .withUser("someone")
                        .withNewResourceAttributes()
                        .withVerb("get")
                        .endResourceAttributes()
                        .endSpec()
                        .build());
        assertThat(denied.getStatus().getAllowed()).isFalse();
    }

    @Test
    void serverClosesWithoutLeavingThreads() throws Exception {
        LocalApiServer extra = LocalApiServer.start(LocalApiServer.Options.defaults());
        extra.client()
                .resources(Allocation.class)
                .inNamespace("default")
                .resource(alloc("x", "a"))
                .create();
        extra.close();
        assertThatThrownBy(() -> HttpClient.newBuilder()
                        .sslContext(extra.trust())
                        .build()
                        .send(
                                HttpRequest.newBuilder(extra.url().resolve("/version"))
                                        .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                                        .build(),
                                HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(java.io.IOException.class);
    }

    @Test
    void crdsAreEstablishedWithTheirNamesAcceptedAndStorageVersionRecorded() {
        var crds = client.apiextensions().v1().customResourceDefinitions();
        var installed = crds.withName("allocations.drover.dev").get().getStatus();
        assertThat(installed.getConditions())
                .extracting(c -> c.getType() + "=" + c.getStatus())
                .containsExactly("NamesAccepted=True", "Established=True");
        assertThat(installed.getAcceptedNames().getListKind()).isEqualTo("AllocationList");
        assertThat(installed.getStoredVersions()).containsExactly("v1alpha1");

        var widget = crds.resource(
                        new io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder()
                                .withNewMetadata()
                                .withName("widgets.example.com")
                                .endMetadata()
                                .withNewSpec()
                                .withGroup("example.com")
                                .withScope("Namespaced")
                                .withNewNames()
                                .withKind("Widget")
                                .withPlural("widgets")
                                .endNames()
                                .addNewVersion()
                                .withName("v1")
                                .withServed(true)
                                .withStorage(true)
                                .withNewSchema()
                                .withNewOpenAPIV3Schema()
                                .withType("object")
                                .withXKubernetesPreserveUnknownFields(true)
                                .endOpenAPIV3Schema()
                                .endSchema()
                                .endVersion()
                                .endSpec()
                                .build())
                .create();
        assertThat(widget.getStatus().getAcceptedNames().getSingular()).isEqualTo("widget");
        assertThat(widget.getStatus().getConditions())
                .anyMatch(
                        c -> c.getType().equals("Established") && c.getStatus().equals("True"));

        widget.getSpec().getNames().setShortNames(List.of("wd"));
        widget.getSpec().getVersions().getFirst().setStorage(false);
        widget.getSpec()
                .getVersions()
                .add(new io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersionBuilder()
                        .withName("v2")
                        .withServed(true)
                        .withStorage(true)
                        .withNewSchema()
                        .withNewOpenAPIV3Schema()
                        .withType("object")
                        .withXKubernetesPreserveUnknownFields(true)
                        .endOpenAPIV3Schema()
                        .endSchema()
                        .build());
        var updated = crds.resource(widget).update().getStatus();
        assertThat(updated.getAcceptedNames().getShortNames()).containsExactly("wd");
        assertThat(updated.getStoredVersions()).containsExactly("v1", "v2");
        crds.withName("widgets.example.com").delete();
    }
}
