package dev.drover.controller;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * The status writer's way to the API server: a JSON patch that replaces the
 * whole {@code status} of the allocation's status subresource (a merge patch
 * would leave fields behind that the new status no longer has). An allocation
 * that is gone needs no status: that write counts as done.
 */
public final class StatusPatcher implements StatusWriter.Sink {

    private final KubernetesClient client;

    public StatusPatcher(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public void write(AllocId id, AllocationStatus status) {
        String value = client.getKubernetesSerialization().asJson(status);
        String patch = "[{\"op\":\"add\",\"path\":\"/status\",\"value\":" + value + "}]";
        try {
            client.resources(Allocation.class)
                    .inNamespace(id.namespace())
                    .withName(id.name())
                    .subresource("status")
                    .patch(PatchContext.of(PatchType.JSON), patch);
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
    }
}
