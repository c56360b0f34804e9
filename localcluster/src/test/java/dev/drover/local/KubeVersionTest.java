package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import org.junit.jupiter.api.Test;

class KubeVersionTest {

    @Test
    void versionsOutsideWhatTheServerActsAsAreRefusedSayingWhich() {
        assertThat(KubeVersion.parse("1.30").minor()).isEqualTo(30);
        assertThat(KubeVersion.parse("v1.31").minor()).isEqualTo(31);
        assertThatThrownBy(() -> KubeVersion.parse("1.24"))
                .hasMessage("Kubernetes 1.24 is not one this server acts as: 1.25 to 1.36");
        assertThatThrownBy(() -> KubeVersion.parse("2.0")).hasMessage("\"2.0\" is not a Kubernetes version like 1.30");
        assertThatThrownBy(() -> KubeVersion.parse("1.30.1")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aServerActingAs130DropsSelectableFieldsAndRefusesASelectorOnTheNodeName() throws Exception {
        try (LocalApiServer server = LocalApiServer.start(
                LocalApiServer.Options.defaults().withNodes(List.of("a")).withKubeVersion("1.30"))) {
            KubernetesClient client = server.client();
            assertThat(client.getKubernetesVersion().getMinor()).isEqualTo("30");
            CustomResourceDefinition crd = client.apiextensions()
                    .v1()
                    .customResourceDefinitions()
                    .withName("allocations.drover.dev")
                    .get();
            assertThat(crd.getSpec().getVersions().getFirst().getSelectableFields())
                    .as("dropped as 1.30 drops them")
                    .isNullOrEmpty();

            assertThatThrownBy(() -> client.resources(Allocation.class)
                            .inNamespace("default")
                            .withField("spec.nodeName", "a")
                            .list())
                    .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(400);
                        assertThat(e.getMessage()).contains("field label not supported: spec.nodeName");
                    });
            assertThat(client.resources(Allocation.class)
                            .inNamespace("default")
                            .withField("metadata.name", "x")
                            .list()
                            .getItems())
                    .isEmpty();
        }
    }

    @Test
    void theNewestServerSelectsByTheNodeNameButNoOtherSpecField() throws Exception {
        try (LocalApiServer server = LocalApiServer.start(LocalApiServer.Options.defaults())) {
            KubernetesClient client = server.client();
            assertThat(client.resources(Allocation.class)
                            .inNamespace("default")
                            .withField("spec.nodeName", "a")
                            .list()
                            .getItems())
                    .isEmpty();
            assertThatThrownBy(() -> client.resources(Allocation.class)
                            .inNamespace("default")
                            .withField("spec.type", "batch")
                            .list())
                    .isInstanceOfSatisfying(
                            KubernetesClientException.class,
                            e -> assertThat(e.getMessage())
                                    .contains(
                                            "Unable to find \"drover.dev/v1alpha1, Resource=allocations\" that match label"
                                                    + " selector \"\", field selector \"spec.type=batch\": field label not supported:"
                                                    + " spec.type"));
        }
    }

    /** A watch list of namespaces (sendInitialEvents) for at most a second: its status and the events' lines. */
    private static java.net.http.HttpResponse<String> watchList(LocalApiServer server) throws Exception {
        try (java.net.http.HttpClient http =
                java.net.http.HttpClient.newBuilder().sslContext(server.trust()).build()) {
            return http.send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(server.url()
                                    + "/api/v1/namespaces?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                                    + "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"))
                            .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void aWatchListGetsTheCurrentStateThenTheInitialEventsEndBookmarkFrom132Only() throws Exception {
        try (LocalApiServer server = LocalApiServer.start(LocalApiServer.Options.defaults())) {
            var r = watchList(server);
            assertThat(r.statusCode()).isEqualTo(200);
            List<String> lines = r.body().lines().toList();
            assertThat(lines).hasSize(4); // default, kube-system, kube-public, then the bookmark
            assertThat(lines.subList(0, 3)).allMatch(l -> l.startsWith("{\"type\":\"ADDED\""));
            assertThat(lines.get(3))
                    .startsWith("{\"type\":\"BOOKMARK\"")
                    .contains("\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}");
        }
        try (LocalApiServer server =
                LocalApiServer.start(LocalApiServer.Options.defaults().withKubeVersion("1.31"))) {
            var r = watchList(server);
            assertThat(r.statusCode()).isEqualTo(422);
            assertThat(r.body()).contains("sendInitialEvents is forbidden for watch unless the WatchList feature gate");
        }
    }
}
