package dev.drover.sharing;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.List;
import java.util.Map;

/**
 * What {@link PodResize} reads of the agent's Pod, and nothing else. Read as fabric8's {@code Pod}, the first read
 * loaded some 470 classes that nothing else of an agent with default settings loads: every model type a Pod holds,
 * with its builder and fluent (reflection on the model's {@code edit()} and {@code toBuilder()} loads them).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
record ResizedPod(Metadata metadata, Spec spec, Status status) {

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Metadata(Long generation) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Spec(List<Container> containers) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Container(String name) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Status(Long observedGeneration, List<Condition> conditions, List<ContainerStatus> containerStatuses) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Condition(String type, String status, String reason, String message, Long observedGeneration) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    record ContainerStatus(String name, Map<String, Quantity> allocatedResources) {}

    /** The Pod's containers, in order; empty where it names none. */
    List<Container> containers() {
        return spec == null || spec.containers() == null ? List.of() : spec.containers();
    }

    /** The Pod's conditions; empty where its status has none. */
    List<Condition> conditions() {
        return status == null || status.conditions() == null ? List.of() : status.conditions();
    }

    /** Its containers' statuses; empty where its status has none. */
    List<ContainerStatus> containerStatuses() {
        return status == null || status.containerStatuses() == null ? List.of() : status.containerStatuses();
    }
}
