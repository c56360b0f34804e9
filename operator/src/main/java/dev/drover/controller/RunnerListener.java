package dev.drover.controller;

import dev.drover.allocrunner.AllocState;
import dev.drover.allocrunner.AllocStateListener;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.state.AllocId;
import java.util.List;
import java.util.Map;

/**
 * The listener of one tracked allocation's runner: what the runner tells is reported while the controller holds
 * that allocation, and dropped once it is destroyed or replaced by a new object of its name.
 */
final class RunnerListener implements AllocStateListener {

    private final TrackedAllocation allocation;
    private final Map<AllocId, TrackedAllocation> held;
    private final AllocationReports reports;

    RunnerListener(TrackedAllocation allocation, Map<AllocId, TrackedAllocation> held, AllocationReports reports) {
        this.allocation = allocation;
        this.held = held;
        this.reports = reports;
    }

    @Override
    public void allocStateChanged(AllocId id, AllocState state, String task, List<TaskEvent> events) {
        if (held.get(id) == allocation) {
            reports.stateChanged(allocation, state, task, events);
        }
    }

    @Override
    public void hookFailed(AllocId id, String hook, String phase, RuntimeException failure) {
        reports.hookFailed(hook, phase);
    }

    @Override
    public void allocWarning(AllocId id, String reason, String message) {
        if (held.get(id) == allocation) {
            reports.warning(allocation, reason, message);
        }
    }
}
