package dev.drover.controller.events;

import dev.drover.kube.RawWrites;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * The event recorder's way to the API server: creates Events and merge-patches their count, with no read first
 * (the chart grants create and patch on Events, not get). A name that exists (409) or an Event that expired (404)
 * is an answer the recorder acts on, not a failure.
 */
public final class EventPoster implements EventRecorder.Sink {

    private final KubernetesClient client;
    private final RawWrites raw;

    public EventPoster(KubernetesClient client) {
        this.client = client;
        this.raw = new RawWrites(client);
    }

    @Override
    public boolean create(Event event) {
        try {
            // the answer (the Event as stored) is not read
            raw.send(
                    "POST",
                    "/api/v1/namespaces/"
                            + RawWrites.named("namespace", event.getMetadata().getNamespace()) + "/events",
                    "application/json",
                    client.getKubernetesSerialization().asJson(event));
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            return false;
        }
    }

    @Override
    public boolean patch(Event patch) {
        try {
            // given whole, so it goes without reading the Event first
            raw.send(
                    "PATCH",
                    "/api/v1/namespaces/"
                            + RawWrites.named("namespace", patch.getMetadata().getNamespace()) + "/events/"
                            + RawWrites.named("name", patch.getMetadata().getName()),
                    "application/merge-patch+json",
                    client.getKubernetesSerialization().asJson(patch));
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
            return false;
        }
    }
}
