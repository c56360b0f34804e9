package dev.drover.controller;

import dev.drover.admission.Decision;
import dev.drover.allocrunner.AllocState;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.validation.Violation;
import dev.drover.controller.events.EventRecorder;
import dev.drover.controller.services.AllocationEndpoints;
import dev.drover.controller.status.AllocationStatuses;
import dev.drover.controller.status.StatusWriter;
import dev.drover.devices.DeviceLedger;
import dev.drover.gc.GarbageCollector;
import dev.drover.metrics.DroverMetrics;
import dev.drover.state.StateDB;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells what happens to the allocations the controller holds: statuses (through the {@link StatusWriter}),
 * Kubernetes Events and metrics. A terminal allocation's devices and its share of the node are freed once all its
 * tasks are dead and its status, which keeps naming them, is built. Nothing is written about a restored allocation
 * the API server has not confirmed yet.
 */
final class AllocationReports {

    private static final Logger LOG = LoggerFactory.getLogger(AllocationReports.class);

    private final StatusWriter writer;
    private final EventRecorder events;
    private final DroverMetrics metrics;
    private final GarbageCollector gc;
    private final DeviceLedger ledger;
    private final StartGate gate;
    private final StateDB db;
    private final InstantSource clock;
    private final Admissions admissions;
    private final AllocationEndpoints endpoints;

    /** @param ledger the node's device reservations, or null when the agent runs no device plugins */
    AllocationReports(
            StatusWriter writer,
            EventRecorder events,
            DroverMetrics metrics,
            GarbageCollector gc,
            DeviceLedger ledger,
            StartGate gate,
            StateDB db,
            InstantSource clock,
            Admissions admissions,
            AllocationEndpoints endpoints) {
        this.endpoints = endpoints;
        this.writer = writer;
        this.events = events;
        this.metrics = metrics;
        this.gc = gc;
        this.ledger = ledger;
        this.gate = gate;
        this.db = db;
        this.clock = clock;
        this.admissions = admissions;
    }

    /** The allocation's runner changed state: its status, the task events behind it and the store's trouble. */
    void stateChanged(TrackedAllocation t, AllocState state, String task, List<TaskEvent> taskEvents) {
        for (TaskEvent event : taskEvents) {
            metrics.taskEvent(event);
            if (event.getType() == TaskEventType.CheckStatusChanged) {
                metrics.checks()
                        .transition(
                                t.id.namespace(), t.id.name(), t.uid, task, event.getCheck(), event.getCheckStatus());
            }
        }
        metrics.checks().states(t.id.namespace(), t.id.name(), t.uid, state.version(), state.taskStates());
        Optional<String> unstored = db.unstored(t.id);
        BuiltStatus.Change c = t.stateChanged(
                state,
                unstored,
                ledger == null ? null : () -> ledger.allocated(t.id).orElse(null),
                clock.instant(),
                status -> {
                    writer.publish(t.id, status);
                    endpoints.statusBuilt(
                            t.owner(), t.publishes().services(), t.publishes().stopping(), status);
                });
        if (c.leftPending()) {
            gate.release(t.id);
        }
        if (c.runningAfterNanos() > 0) {
            metrics.seenToRunning(c.runningAfterNanos() / 1e9);
        }
        if (c.enteredFailed()) {
            metrics.allocationFailed();
        }
        boolean tell = c.owner() != null && t.confirmed();
        if (tell) {
            for (TaskEvent event : taskEvents) {
                events.record(c.owner(), task, event, clock);
            }
        }
        if (c.storeChanged() && tell) {
            if (unstored.isPresent()) {
                events.recordForAllocation(
                        c.owner(),
                        true,
                        AllocationStatuses.STATE_STORE_FAILED,
                        storeFailedMessage(unstored.get()),
                        clock.instant());
            } else {
                events.recordForAllocation(
                        c.owner(),
                        false,
                        AllocationStatuses.STATE_STORED,
                        "The agent's state store" + " holds this allocation's state again",
                        clock.instant());
            }
        }
        if (c.tasksEnded()) {
            admissions.release(t.id); // its devices too: the status keeps naming them, it was built above
        }
        if (c.becameTerminal()) {
            gc.terminalChanged();
        }
    }

    /** A warning about the allocation as a whole (a disk it may not take). */
    void warning(TrackedAllocation t, String reason, String message) {
        Allocation owner = t.owner();
        if (owner != null && t.confirmed()) {
            events.recordForAllocation(owner, true, reason, message, clock.instant());
        }
    }

    void hookFailed(String hook, String phase) {
        metrics.hookFailure(hook, phase);
    }

    /** The spec cannot be run: every bad field reported, any runner kept on its last good spec. */
    void refuse(TrackedAllocation t, Allocation a, long generation, List<Violation> problems) {
        BuiltStatus.Built b = t.refuse(generation, problems, clock.instant(), status -> writer.publish(t.id, status));
        if (b.news()) {
            String message = "Invalid allocation: " + AllocationStatuses.describe(problems);
            LOG.warn("allocation {}: {}", t.id, message);
            events.recordForAllocation(
                    EventRecorder.owner(a), true, TaskEventType.FailedValidation.name(), message, clock.instant());
        }
    }

    /** The node cannot fit the allocation: Failed with Admitted=False, never run, and a Warning Event. */
    void refuseAdmission(TrackedAllocation t, Allocation a, Decision d) {
        BuiltStatus.Built b = t.refuseAdmission(
                a, AllocationStatuses.generationOf(a), d, clock.instant(), status -> writer.publish(t.id, status));
        if (b.news()) {
            LOG.info("allocation {} refused: {}", t.id, d.message());
            events.recordForAllocation(EventRecorder.owner(a), true, d.reason(), d.message(), clock.instant());
        }
    }

    /**
     * The node cannot fit the running allocation's new generation: Admitted=False for it and a Warning Event, while
     * it runs on as it was.
     */
    void refuseUpdate(TrackedAllocation t, Allocation a, long generation, Decision d) {
        BuiltStatus.Built b = t.refuseUpdate(generation, d, clock.instant(), status -> writer.publish(t.id, status));
        if (b.news()) {
            LOG.info("allocation {}: generation {} refused: {}", t.id, generation, d.message());
            events.recordForAllocation(EventRecorder.owner(a), true, d.reason(), d.message(), clock.instant());
        }
    }

    /** The store could not write the spec of an allocation being taken on: Pending, with StateStored=False. */
    void waitForStore(TrackedAllocation t, Allocation a, long generation, String reason) {
        BuiltStatus.Built b =
                t.waitForStore(a, generation, reason, clock.instant(), status -> writer.publish(t.id, status));
        if (b.news()) {
            LOG.warn("allocation {} is taken on once the state store can write: {}", t.id, reason);
            events.recordForAllocation(
                    EventRecorder.owner(a),
                    true,
                    AllocationStatuses.STATE_STORE_FAILED,
                    storeFailedMessage(reason),
                    clock.instant());
        }
    }

    private static String storeFailedMessage(String reason) {
        return "The agent cannot write this allocation's state to its store: " + reason
                + ". Nothing is lost: tasks keep running and the agent writes it again with back-off; free disk space"
                + " on the node's data dir.";
    }
}
