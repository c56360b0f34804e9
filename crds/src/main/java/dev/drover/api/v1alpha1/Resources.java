package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Size;
import java.util.List;
import java.util.Objects;

/** What a task needs of the node. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Resources {

    @Min(0)
    @JsonPropertyDescription(
            "CPU in millicores: requested for node admission, and under raw_exec the task's CPU weight.")
    private Integer cpuMillis;

    @Min(0)
    @JsonPropertyDescription("Memory in MB: requested for node admission, and under raw_exec a hard memory limit.")
    private Integer memoryMB;

    /** Whether {@code cpuMillis} is also a hard quota (the task is throttled past it), not only a weight. */
    @JsonPropertyDescription(
            "Whether cpuMillis is also a hard quota (the task is throttled past it), not only a weight; needs cpuMillis.")
    private Boolean cpuHardLimit;

    @Size(max = 16)
    @JsonPropertyDescription("Devices the task needs (e.g. GPUs), at most 16.")
    private List<DeviceRequest> devices;

    public Integer getCpuMillis() {
        return cpuMillis;
    }

    public void setCpuMillis(Integer cpuMillis) {
        this.cpuMillis = cpuMillis;
    }

    public Integer getMemoryMB() {
        return memoryMB;
    }

    public void setMemoryMB(Integer memoryMB) {
        this.memoryMB = memoryMB;
    }

    public Boolean getCpuHardLimit() {
        return cpuHardLimit;
    }

    public void setCpuHardLimit(Boolean cpuHardLimit) {
        this.cpuHardLimit = cpuHardLimit;
    }

    public List<DeviceRequest> getDevices() {
        return devices;
    }

    public void setDevices(List<DeviceRequest> devices) {
        this.devices = devices;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Resources r
                && Objects.equals(cpuMillis, r.cpuMillis)
                && Objects.equals(memoryMB, r.memoryMB)
                && Objects.equals(cpuHardLimit, r.cpuHardLimit)
                && Objects.equals(devices, r.devices);
    }

    @Override
    public int hashCode() {
        return Objects.hash(cpuMillis, memoryMB, cpuHardLimit, devices);
    }
}
