package dev.drover.admission;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.api.v1alpha1.Task;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What an allocation asks of the node: CPU and memory ({@link CpuMemory#requestsOf}) and the devices of each task.
 *
 * @param devices each task's device requests, by task name in the spec's order; tasks that ask for none are absent
 */
public record Requests(CpuMemory cpuMemory, Map<String, List<DeviceRequest>> devices) {

    public static final Requests NONE = new Requests(CpuMemory.ZERO, Map.of());

    public Requests {
        Map<String, List<DeviceRequest>> copy = new LinkedHashMap<>();
        devices.forEach((task, asked) -> copy.put(task, List.copyOf(asked)));
        devices = Collections.unmodifiableMap(copy);
    }

    /**
     * The requests of {@code spec}'s tasks, lifecycle tasks included: a task's devices are held for the allocation's
     * life, not only while it runs. One with {@code desiredStatus: Stop} runs nothing and asks for nothing.
     */
    public static Requests of(AllocationSpec spec) {
        CpuMemory cpuMemory = CpuMemory.requestsOf(spec);
        if (spec == null || spec.getTasks() == null || spec.effectiveDesiredStatus() == DesiredStatus.Stop) {
            return new Requests(cpuMemory, Map.of());
        }
        Map<String, List<DeviceRequest>> devices = new LinkedHashMap<>();
        for (Task t : spec.getTasks()) {
            if (t != null
                    && t.getResources() != null
                    && t.getResources().getDevices() != null
                    && !t.getResources().getDevices().isEmpty()) {
                devices.put(t.getName(), t.getResources().getDevices());
            }
        }
        return new Requests(cpuMemory, devices);
    }
}
