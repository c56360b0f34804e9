package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kubectl drover restart} on the plugin's own client: what it sends, and a refusal of the patch. */
class DirectRestartTest {

    static final String ALLOC = "/apis/drover.dev/v1alpha1/namespaces/team-a/allocations/web";
    static final String REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

    @TempDir
    Path dir;

    KubernetesMockServer server;
    Path kubeconfig;
    final List<String> patches = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new KubernetesMockServer(true);
        server.init(InetAddress.getLoopbackAddress(), 0);
        kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, """
                clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
                users: [{name: u, user: {token: kube-token}}]
                contexts: [{name: x, context: {cluster: c, user: u, namespace: team-a}}]
                current-context: x
                """.formatted(server.getPort()));
        server.expect().get().withPath(ALLOC).andReturn(200, """
                        {"apiVersion": "drover.dev/v1alpha1", "kind": "Allocation",
                         "metadata": {"name": "web", "namespace": "team-a"},
                         "spec": {"nodeName": "n1", "tasks": [{"name": "main", "driver": "mock"}]}}""").always();
        server.expect().post().withPath(REVIEWS).andReturn(201, """
                        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview",
                         "status": {"userInfo": {"username": "alice"}}}""").always();
    }

    @AfterEach
    void stop() {
        server.destroy();
    }

    @Test
    void restartPatchesTheAnnotationsNamingWhoAsked() throws Exception {
        server.expect()
                .patch()
                .withPath(ALLOC)
                .andReply(200, request -> {
                    patches.add(request.getHeader("Content-Type") + " "
                            + request.getBody().readUtf8());
                    return "{}";
                })
                .always();
        KubectlDroverTest.Run r =
                KubectlDroverTest.run("restart", "web", "main", "--kubeconfig", kubeconfig.toString());
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).startsWith("allocation team-a/web: restart of task main (if running) requested");
        assertThat(patches)
                .singleElement()
                .asString()
                .startsWith(
                        "application/merge-patch+json {\"metadata\":{\"annotations\":{\"drover.dev/restartedAt\":\"main@")
                .endsWith("\"drover.dev/restartedBy\":\"alice\"}}}");
        KubectlDroverTest.Run noTask =
                KubectlDroverTest.run("restart", "web", "db", "--kubeconfig", kubeconfig.toString());
        assertThat(noTask.err()).isEqualTo("kubectl drover: allocation team-a/web has no task db (its tasks: main)\n");
    }

    @Test
    void aRefusedPatchNamesWhatRestartNeeds() throws Exception {
        server.expect().patch().withPath(ALLOC).andReturn(403, """
                        {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
                         "message": "allocations.drover.dev \\"web\\" is forbidden: User \\"bob\\" cannot patch resource \\"allocations\\""}""").always();
        KubectlDroverTest.Run r = KubectlDroverTest.run("restart", "web", "--kubeconfig", kubeconfig.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err())
                .isEqualTo("kubectl drover: not allowed: restart needs get and patch on allocations in API group"
                        + " drover.dev: allocations.drover.dev \"web\" is forbidden: User \"bob\" cannot patch resource"
                        + " \"allocations\" (HTTP 403)\n");
    }
}
