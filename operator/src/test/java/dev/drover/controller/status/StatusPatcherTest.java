package dev.drover.controller.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.state.AllocId;
import dev.drover.testing.ExpectingApi;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A status is written as one JSON patch whose answer is not read; a refusal still says what the API server said. */
class StatusPatcherTest {

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
    void aStatusIsSentAsAJsonPatchAndItsAnswerIsNotRead() throws Exception {
        server.expect()
                .patch()
                .withPath("/apis/drover.dev/v1alpha1/namespaces/default/allocations/web/status")
                .andReturn(200, "{\"not\": \"an allocation, and never bound\"")
                .once();
        AllocationStatus status = new AllocationStatus();
        status.setClientStatus(ClientStatus.Running);
        new StatusPatcher(client).write(new AllocId("default", "web"), status);

        var sent = server.takeRequest();
        assertThat(sent.getHeader("Content-Type")).startsWith("application/json-patch+json");
        assertThat(sent.getBody().readUtf8())
                .isEqualTo("[{\"op\":\"add\",\"path\":\"/status\",\"value\":"
                        + "{\"clientStatus\":\"Running\",\"taskStates\":{},\"conditions\":[]}}]");
    }

    @Test
    void aGoneAllocationNeedsNoStatusButARefusalSaysWhyEscaped() {
        server.expect()
                .patch()
                .withPath("/apis/drover.dev/v1alpha1/namespaces/default/allocations/gone/status")
                .andReturn(404, "{}")
                .once();
        server.expect()
                .patch()
                .withPath("/apis/drover.dev/v1alpha1/namespaces/default/allocations/web/status")
                .andReturn(
                        403,
                        new StatusBuilder()
                                .withCode(403)
                                .withMessage("forbidden\u001b[2J" + "x".repeat(10_000))
                                .build())
                .once();
        StatusPatcher patcher = new StatusPatcher(client);
        patcher.write(new AllocId("default", "gone"), new AllocationStatus());
        assertThatThrownBy(() -> patcher.write(new AllocId("default", "web"), new AllocationStatus()))
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(403);
                    assertThat(e.getMessage())
                            .contains("HTTP 403: forbidden")
                            .doesNotContain("\u001b")
                            .hasSizeLessThan(600);
                });
    }
}
