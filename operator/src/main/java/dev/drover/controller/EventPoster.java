package dev.drover.controller;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * The event recorder's way to the API server: creates Events and merge-patches their count, with no read first
 * (the chart grants create and patch on Events, not get). A name that exists (409) or an Event that expired (404)
 * is an answer the recorder acts on, not a failure.
 */
public final class EventPoster implements EventRecorder.Sink {

    private final KubernetesClient client;

    public EventPoster(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public boolean create(Event event) {
        try {
            client.v1()
                    .events()
                    .inNamespace(event.getMetadata().getNamespace())
                    .resource(event)
                    .create();
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
            // given whole, so the client sends it without reading the Event first
            client.v1()
                    .events()
                    .inNamespace(patch.getMetadata().getNamespace())
                    .resource(patch)
                    .patch(PatchContext.of(PatchType.JSON_MERGE));
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
            return false;
        }
    }
}
