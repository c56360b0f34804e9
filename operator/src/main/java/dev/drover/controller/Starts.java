package dev.drover.controller;

import dev.drover.admission.Decision;
import dev.drover.allocrunner.AllocRunner;
import dev.drover.allocrunner.AllocStateListener;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.validation.Violation;
import dev.drover.controller.status.AllocationStatuses;
import dev.drover.gc.GarbageCollector;
import dev.drover.state.StateStoreException;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes new allocations on: each is admitted to the node ({@link Admissions}), waits for a start slot ({@link StartGate}), then its runner is created (its spec
 * stored first) and run. One deleted meanwhile is never run; a newer copy that came meanwhile is applied after the
 * start. A store that cannot write the spec leaves the allocation waiting for it, not refused.
 */
final class Starts {

    private static final Logger LOG = LoggerFactory.getLogger(Starts.class);

    /** Where a copy that came while the allocation started goes (the controller's reconcile). */
    @FunctionalInterface
    interface Newer {
        void apply(Allocation a) throws InterruptedException;
    }

    private final StartGate gate;
    private final RunnerFactory runners;
    private final Function<TrackedAllocation, AllocStateListener> listeners;
    private final AllocationReports reports;
    private final GarbageCollector gc;
    private final Teardown teardown;
    private final Newer newer;
    private final Admissions admissions;

    Starts(
            StartGate gate,
            RunnerFactory runners,
            Function<TrackedAllocation, AllocStateListener> listeners,
            AllocationReports reports,
            GarbageCollector gc,
            Teardown teardown,
            Newer newer,
            Admissions admissions) {
        this.gate = gate;
        this.runners = runners;
        this.listeners = listeners;
        this.reports = reports;
        this.gc = gc;
        this.teardown = teardown;
        this.newer = newer;
        this.admissions = admissions;
    }

    /**
     * Admits {@code t} to the node in the order allocations come, and refuses it at once (Failed, never run) if its
     * requests do not fit; starts it with {@code a} now, or once the gate admits it (with the newest copy admitted by
     * then). A newer copy of one admitted that has not started is admitted again: if it no longer fits, it is refused
     * for its generation and the copy admitted before starts. One whose start ended while {@code a} was admitted
     * (the caller saw no runner) has {@code a} applied to its runner, as an update.
     */
    void takeOn(TrackedAllocation t, Allocation a) throws InterruptedException {
        if (t.follows(a)) {
            return; // its runner is being created with the copy admitted before: this one follows, as an update
        }
        Admissions.TakeOn admission = admissions.takeOn(t.id, a);
        Decision d = admission.decision();
        if (d.admitted()) {
            t.accept(); // what was refused of an earlier copy is over
            Phase now = t.admit(a);
            if (now.runs()) {
                newer.apply(a); // it started meanwhile: this copy is an update of its runner
                return;
            }
            if (now != Phase.QUEUED) {
                return; // it follows a start under way, or it was let go meanwhile
            }
        } else if (admission.again()) {
            reports.refuseUpdate(t, a, AllocationStatuses.generationOf(a), d); // the copy admitted before starts
        } else {
            reports.refuseAdmission(t, a, d);
            return;
        }
        if (gate.admitOrQueue(t.id, () -> startAdmitted(t))) {
            startAdmitted(t);
        }
    }

    /**
     * The store writes again: the copy that waited for it starts as it was admitted, not taken on again as a newer
     * copy is (that would clear what was refused of a later copy). Returns whether one waited.
     */
    boolean storeRecovered(TrackedAllocation t) {
        if (!t.storeRecovered()) {
            return false;
        }
        if (gate.admitOrQueue(t.id, () -> startAdmitted(t))) {
            startAdmitted(t);
        }
        return true;
    }

    /** Taken on (the gate admitted it): starts the newest copy, then applies a copy that came meanwhile. */
    private void startAdmitted(TrackedAllocation t) {
        Allocation a = t.slotGiven();
        if (a == null) {
            gate.release(t.id);
            return;
        }
        boolean failed = true;
        try {
            start(t, a);
            failed = false;
        } catch (RuntimeException ex) {
            LOG.error("starting allocation {} failed; it is tried again on its next change or agent start", t.id, ex);
            gate.release(t.id);
        }
        Allocation later = t.startedWith(a, failed);
        if (later != null) {
            try {
                newer.apply(later);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void start(TrackedAllocation t, Allocation a) {
        long generation = AllocationStatuses.generationOf(a);
        t.starting(a, generation);
        AllocRunner runner;
        try {
            runner = runners.create(a, listeners.apply(t));
        } catch (StateStoreException ex) {
            // The node's disk, not the spec: reported as such, and taken on once the store has written it.
            reports.waitForStore(t, a, generation, ex.getMessage());
            gate.release(t.id);
            return;
        } catch (RuntimeException ex) {
            LOG.warn("cannot create a runner for allocation {}: {}", t.id, ex.toString());
            reports.refuse(
                    t, a, generation, List.of(new Violation("metadata", "cannot be run here: " + ex.getMessage())));
            admissions.release(t.id); // Failed, never run: taken on (and admitted) again only with a later copy
            gate.release(t.id);
            return;
        }
        if (!t.attach(runner)) { // deleted while it was being created: never run
            gate.release(t.id);
            try {
                runner.destroy();
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        gc.track(new CollectableAllocation(t, teardown));
        runner.run();
    }
}
