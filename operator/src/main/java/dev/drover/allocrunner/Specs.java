package dev.drover.allocrunner;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskState;
import java.io.IOException;
import java.io.UncheckedIOException;

/** Copies and JSON forms of allocations and task states, with plain Jackson (no Kubernetes client here). */
final class Specs {

    private static final ObjectMapper JSON = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

    private Specs() {
    }

    /** A deep copy: the runner's snapshot never shares objects with the caller's. */
    static Allocation copy(Allocation a) {
        try {
            return JSON.readValue(JSON.writeValueAsBytes(a), Allocation.class);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy allocation " + a.getMetadata().getName(), e);
        }
    }

    static JsonNode toJson(Allocation a) {
        return JSON.valueToTree(a);
    }

    static Allocation allocation(JsonNode json) {
        return JSON.convertValue(json, Allocation.class);
    }

    static TaskState taskState(JsonNode json) {
        return JSON.convertValue(json, TaskState.class);
    }
}
