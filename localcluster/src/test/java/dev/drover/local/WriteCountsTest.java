package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server counts every write it is asked for, by user, verb and resource, and serves the counts at /metrics. */
class WriteCountsTest {

    static LocalApiServer server;
    static AgentIdentity identity;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults().withNodes(List.of("n1")));
        identity = AgentIdentity.install(server, Path.of("..", "charts", "drover"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void writesAreCountedByUserVerbAndResourceWhateverTheirAnswer() throws Exception {
        Path kubeconfig = dir.resolve("n1.kubeconfig");
        identity.writeKubeconfig("n1", kubeconfig);
        server.client()
                .resources(Allocation.class)
                .inNamespace("default")
                .resource(LocalApiServerTest.alloc("counted", "n1"))
                .create();
        try (KubernetesClient agent = new KubernetesClientBuilder()
                .withHttpClientFactory(new JdkHttpClientFactory())
                .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig)))
                .build()) {
            for (ClientStatus s : List.of(ClientStatus.Pending, ClientStatus.Running)) {
                Allocation patch = LocalApiServerTest.alloc("counted", "n1");
                patch.setSpec(null);
                AllocationStatus status = new AllocationStatus();
                status.setClientStatus(s);
                patch.setStatus(status);
                agent.resources(Allocation.class)
                        .inNamespace("default")
                        .resource(patch)
                        .patchStatus();
            }
            agent.v1()
                    .events()
                    .inNamespace("default")
                    .resource(new EventBuilder()
                            .withNewMetadata()
                            .withName("counted.1")
                            .endMetadata()
                            .withNewInvolvedObject()
                            .withApiVersion("drover.dev/v1alpha1")
                            .withKind("Allocation")
                            .withName("counted")
                            .withNamespace("default")
                            .endInvolvedObject()
                            .withReason("Started")
                            .withType("Normal")
                            .withNewSource()
                            .withHost("n1")
                            .endSource()
                            .withReportingInstance("n1")
                            .build())
                    .create();
            try {
                // refused (the agent may not delete allocations), and counted all the same: it reached the server
                agent.resources(Allocation.class)
                        .inNamespace("default")
                        .withName("counted")
                        .delete();
            } catch (io.fabric8.kubernetes.client.KubernetesClientException refused) {
                assertThat(refused.getCode()).isEqualTo(403);
            }
            agent.resources(Allocation.class).inNamespace("default").list(); // a read: not counted
        }
        server.client()
                .resources(Allocation.class)
                .inNamespace("default")
                .withName("counted")
                .delete();

        String metrics = metrics();
        String agent = identity.username();
        assertThat(metrics)
                .contains(line(agent, "patch", "allocations/status", 2))
                .contains(line(agent, "create", "events", 1))
                .contains(line(agent, "delete", "allocations", 1))
                .contains(line(Authenticator.ADMIN.username(), "create", "allocations", 1))
                .contains(line(Authenticator.ADMIN.username(), "delete", "allocations", 1))
                .doesNotContain("verb=\"list\"")
                .doesNotContain("verb=\"get\"");
    }

    @Test
    void aUserKeptOutOfTheCountsIsOtherOnceTheSeriesAreFull() {
        WriteCounts counts = new WriteCounts();
        RequestInfo patch = RequestInfo.of(
                "PATCH", "/apis/drover.dev/v1alpha1/namespaces/default/allocations/a/status", Query.parse(null));
        for (int i = 0; i < WriteCounts.MAX_SERIES + 5; i++) {
            counts.count(new UserInfo("user-" + i + "\"\n", "", List.of(), java.util.Map.of()), patch);
        }
        String text = counts.exposition();
        assertThat(text.lines().filter(l -> l.startsWith(WriteCounts.SERIES))).hasSize(WriteCounts.MAX_SERIES + 1);
        assertThat(text).contains(line(WriteCounts.OTHER, "patch", "allocations/status", 5));
        assertThat(text).contains("user=\"user-0\\\"\\n\"");
    }

    private static String line(String user, String verb, String resource, long n) {
        return WriteCounts.SERIES + "{user=\"" + user + "\",verb=\"" + verb + "\",resource=\"" + resource + "\"} " + n
                + "\n";
    }

    private static String metrics() throws Exception {
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(server.url().resolve(WriteCounts.PATH))
                            .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            return r.body();
        }
    }
}
