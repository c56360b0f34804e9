package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
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
@JsonClassDescription("What the node's agent made of the allocation; written by that agent only, through the status"
        + " subresource.")
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AllocationStatus {

    @JsonPropertyDescription(
            "Pending, Running, Complete, Failed or Lost: what the node's agent made of the allocation.")
    private ClientStatus clientStatus;

    @JsonPropertyDescription("One sentence saying why the allocation has its client status, e.g. Tasks are running.")
    private String clientDescription;

    @JsonPropertyDescription("The metadata.generation of the spec the agent last acted on.")
    private Long observedGeneration;

    @JsonPropertyDescription("Each task's state, by task name: its lifecycle, restarts, newest events and checks.")
    private Map<String, TaskState> taskStates = new LinkedHashMap<>();

    @JsonPropertyDescription(
            "The device instances reserved for each task (e.g. GPUs), released when the allocation is destroyed.")
    private List<AllocatedDevice> allocatedDevices;

    @JsonPropertyDescription("The devices held, counted by kind, e.g. 2 nvidia/gpu; derived from allocatedDevices, for"
            + " kubectl get -o wide.")
    private String devices;

    @JsonPropertyDescription("The network the agent gave the allocation: mode, address and the host ports it holds.")
    private NetworkStatus network;

    @JsonPropertyDescription(
            "Kubernetes conditions: Ready, Healthy (with checks), SpecValid, Admitted and StateStored.")
    private List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("Running main tasks over all main tasks (running/total), for kubectl get.")
    private String ready;

    @JsonPropertyDescription("The sum of the tasks' restarts, for kubectl get.")
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

    /** Also sets {@link #getDevices()}, the summary a printer column shows (a column cannot count). */
    public void setAllocatedDevices(List<AllocatedDevice> allocatedDevices) {
        this.allocatedDevices = allocatedDevices;
        this.devices = AllocatedDevice.summary(allocatedDevices);
    }

    /** The devices held, counted by kind ({@code 2 nvidia/gpu, 1 intel/fpga}); null when none. */
    public String getDevices() {
        return devices;
    }

    public void setDevices(String devices) {
        this.devices = devices;
    }

    public NetworkStatus getNetwork() {
        return network;
    }

    public void setNetwork(NetworkStatus network) {
        this.network = network;
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
                && Objects.equals(devices, s.devices)
                && Objects.equals(network, s.network)
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
                devices,
                network,
                conditions,
                ready,
                restarts);
    }
}
