package dev.drover.controller.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.testing.ExpectingApi;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Events are created and patched without reading their answers; a name that exists or an Event that expired is an answer, and a nameless Event is never sent. */
class EventPosterTest {

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
    void anEventThatExistsOrExpiredIsAnAnswerNotAFailure() {
        server.expect()
                .post()
                .withPath("/api/v1/namespaces/default/events")
                .andReturn(409, "{}")
                .once();
        server.expect()
                .post()
                .withPath("/api/v1/namespaces/default/events")
                .andReturn(201, "{}")
                .once();
        server.expect()
                .patch()
                .withPath("/api/v1/namespaces/default/events/web.1")
                .andReturn(404, "{}")
                .once();
        EventPoster poster = new EventPoster(client);
        var event = new EventBuilder()
                .withNewMetadata()
                .withNamespace("default")
                .withName("web.1")
                .endMetadata()
                .withReason("Started")
                .build();
        assertThat(poster.create(event)).as("409: the name exists").isFalse();
        assertThat(poster.create(event)).isTrue();
        assertThat(poster.patch(event)).as("404: it expired").isFalse();
    }

    @Test
    void aNamelessEventIsNeverSent() {
        var nameless = new EventBuilder().withNewMetadata().endMetadata().build();
        assertThatThrownBy(() -> new EventPoster(client).create(nameless))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessage("no namespace to write to");
        assertThat(server.getRequestCount()).isZero();
    }
}
