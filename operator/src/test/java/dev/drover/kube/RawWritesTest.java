package dev.drover.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.testing.ExpectingApi;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Writes that skip their answers send nothing odd: a path outside the API's names, or a missing name, is refused
 * before a request. What the API server answers is in {@code StatusPatcherTest} and {@code EventPosterTest}.
 */
class RawWritesTest {

    ExpectingApi api;
    KubernetesMockServer server;
    KubernetesClient client;

    @BeforeEach
    void start() {
        api = new ExpectingApi();
        server = api.server();
        client = api.client();
    }

    @AfterEach
    void stop() {
        api.close();
    }

    @Test
    void aNameOutsideTheApisGrammarIsNeverSent() {
        RawWrites raw = new RawWrites(client);
        for (String path : new String[] {
            "/api/v1/namespaces/default/events/../../secrets", "/api/v1/namespaces/a?b=c/events", "/api/v1/x y", "/a/B"
        }) {
            assertThatThrownBy(() -> raw.send("POST", path, "application/json", "{}"))
                    .isInstanceOf(KubernetesClientException.class)
                    .hasMessageStartingWith("not a path of the API's names");
        }
        assertThatThrownBy(() -> RawWrites.named("namespace", null))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessage("no namespace to write to");
        assertThat(server.getRequestCount()).isZero();
    }
}
