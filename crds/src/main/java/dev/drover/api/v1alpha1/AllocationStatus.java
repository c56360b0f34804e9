package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What the node's agent made of the allocation (docs/allocations.md, status).
 * {@code ready} ("running/total" main tasks) and {@code restarts} (the sum of
 * task restarts) exist for {@code kubectl get}'s columns.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AllocationStatus {

    private ClientStatus clientStatus;
    private String clientDescription;
    private Long observedGeneration;
    private Map<String, TaskState> taskStates = new LinkedHashMap<>();
    private List<AllocatedDevice> allocatedDevices;
    private List<Condition> conditions = new ArrayList<>();
    private String ready;
    private Integer restarts;

    public ClientStatus getClientStatus() {
        return clientStatus;
    }

    public void setClientStatus(ClientStatus clientStatus) {
        this.clientStatus = clientStatus;
    }

    public String getClientDescription() {
        return clientDescription;
    }

    public void setClientDescription(String clientDescription) {
        this.clientDescription = clientDescription;
    }

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public Map<String, TaskState> getTaskStates() {
        return taskStates;
    }

    public void setTaskStates(Map<String, TaskState> taskStates) {
        this.taskStates = taskStates;
    }

    public List<AllocatedDevice> getAllocatedDevices() {
        return allocatedDevices;
    }

    public void setAllocatedDevices(List<AllocatedDevice> allocatedDevices) {
        this.allocatedDevices = allocatedDevices;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }

    public String getReady() {
        return ready;
    }

    public void setReady(String ready) {
        this.ready = ready;
    }

    public Integer getRestarts() {
        return restarts;
    }

    public void setRestarts(Integer restarts) {
        this.restarts = restarts;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AllocationStatus s
                && clientStatus == s.clientStatus
                && Objects.equals(clientDescription, s.clientDescription)
                && Objects.equals(observedGeneration, s.observedGeneration)
                && Objects.equals(taskStates, s.taskStates)
                && Objects.equals(allocatedDevices, s.allocatedDevices)
                && Objects.equals(conditions, s.conditions)
                && Objects.equals(ready, s.ready)
                && Objects.equals(restarts, s.restarts);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                clientStatus,
                clientDescription,
                observedGeneration,
                taskStates,
                allocatedDevices,
                conditions,
                ready,
                restarts);
    }
}
