package dev.drover.controller.status;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.kube.RawWrites;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * The status writer's way to the API server: a JSON patch that replaces the
 * whole {@code status} of the allocation's status subresource (a merge patch
 * would leave fields behind that the new status no longer has). An allocation
 * that is gone needs no status: that write counts as done.
 */
public final class StatusPatcher implements StatusWriter.Sink {

    private final KubernetesClient client;
    private final RawWrites raw;

    public StatusPatcher(KubernetesClient client) {
        this.client = client;
        this.raw = new RawWrites(client);
    }

    @Override
    public void write(AllocId id, AllocationStatus status) {
        String value = client.getKubernetesSerialization().asJson(status);
        String patch = "[{\"op\":\"add\",\"path\":\"/status\",\"value\":" + value + "}]";
        try {
            // the answer (the whole allocation) is not read: the watch brings it
            raw.send(
                    "PATCH",
                    "/apis/" + HasMetadata.getApiVersion(Allocation.class) + "/namespaces/" + id.namespace() + "/"
                            + HasMetadata.getPlural(Allocation.class) + "/" + id.name() + "/status",
                    "application/json-patch+json",
                    patch);
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
    }
}
