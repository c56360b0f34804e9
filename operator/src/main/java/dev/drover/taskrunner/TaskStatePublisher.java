package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.driver.TaskHandle;
import dev.drover.state.StateStoreException;
import dev.drover.state.TaskLocalState;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task's state (kept by a {@link TaskStateRecorder}) and its local state (the driver's handle, the run-once hooks
 * done), as its runner changes them: every change that others see is stored, then told to the listener, paced while
 * the task restarts quickly and before it first starts ({@link PublishPacing}); its end is published at once, with
 * whatever was held. One change is told at a time, in order: a held change that falls due while the runner's thread
 * tells another waits for it.
 */
final class TaskStatePublisher {

    private static final Logger LOG = LoggerFactory.getLogger(TaskStatePublisher.class);

    /**
     * The events of a task's setup, held until it starts ({@link PublishPacing#holdSetup}). Not {@code Received}: it
     * goes out at once, so that the store and the allocation know every task of the allocation from the start.
     */
    private static final Set<TaskEventType> SETUP = Set.of(TaskEventType.TaskSetup);

    private final TaskRunnerConfig cfg;
    private final String name;
    private final TaskStateRecorder recorder;
    private TaskLocalState local;
    private final PublishPacing pacing = new PublishPacing();
    /** Held while a change is taken and told, so that changes reach the store and the listener in order. */
    private final Object telling = new Object();

    private boolean started;

    TaskStatePublisher(TaskRunnerConfig cfg, TaskStateRecorder recorder, TaskLocalState local) {
        this.cfg = cfg;
        this.name = cfg.task().getName();
        this.recorder = recorder;
        this.local = local;
    }

    synchronized TaskState.State current() {
        return recorder.state();
    }

    synchronized TaskState snapshot() {
        return recorder.snapshot();
    }

    synchronized boolean hookDone(String hook) {
        return local.hookDone(hook);
    }

    /** A run-once hook is done: it does not run again, not even after an agent restart. */
    synchronized void markHookDone(String hook) {
        local = local.withHookDone(hook);
    }

    void event(TaskEvent e) {
        synchronized (this) {
            recorder.event(e);
        }
        publish(e, false);
    }

    /**
     * The task's checks as they stand now, and the event that says why they changed (null for none); told as one
     * change, so a check's transition costs one status write and a check that stays as it was costs none.
     */
    void checks(List<dev.drover.api.v1alpha1.CheckStatus> checks, TaskEvent e) {
        synchronized (this) {
            recorder.checks(checks);
            if (e != null) {
                recorder.event(e);
            }
        }
        publish(e, false);
    }

    /** The task started with {@code handle}, kept for a later agent to reattach to; the Started event publishes it. */
    synchronized void running(TaskHandle handle) {
        local = local.withDriverHandle(StoredHandles.toStored(handle));
        started = true;
        recorder.running(cfg.clock().instant());
        pacing.started(System.nanoTime());
    }

    /** Waiting to start again. */
    void pending() {
        synchronized (this) {
            recorder.pending();
        }
        publish(null, false);
    }

    /** Dead for good; the handle of its last process is dropped. */
    void dead(boolean failed) {
        synchronized (this) {
            recorder.dead(cfg.clock().instant(), failed);
            local = local.withDriverHandle(null);
        }
        publish(null, true);
    }

    /** Dead without having run under this runner: the rest of its local state stays as it was. */
    void deadUnrun(boolean failed) {
        synchronized (this) {
            recorder.dead(cfg.clock().instant(), failed);
        }
        publish(null, true);
    }

    /**
     * Completes when a held change is due ({@link #flush} it then), one held after this call included; cancelled when
     * the held change went out with another (ask again then).
     */
    synchronized CompletableFuture<Void> due() {
        return pacing.due();
    }

    /** Publishes a held change now, if one is held. */
    void flush() {
        synchronized (telling) {
            List<TaskEvent> events;
            synchronized (this) {
                if (!pacing.holding()) {
                    return;
                }
                events = pacing.take(System.nanoTime());
            }
            tell(events);
        }
    }

    /** A change with its event (null for none): published now when {@code now} or the pacing lets it, else held. */
    private void publish(TaskEvent e, boolean now) {
        synchronized (telling) {
            List<TaskEvent> events;
            synchronized (this) {
                long nanos = System.nanoTime();
                if (!now && e != null && beforeFirstStart() && SETUP.contains(e.getType())) {
                    if (pacing.holdSetup(e)) {
                        pacing.due().thenRun(this::flushWhenDue);
                    }
                    return;
                }
                if (pacing.hold(e, !now && recorder.restarts() > 0, nanos)) {
                    return;
                }
                events = pacing.take(nanos);
            }
            tell(events);
        }
    }

    private boolean beforeFirstStart() {
        return !started && recorder.restarts() == 0 && recorder.state() == TaskState.State.Pending;
    }

    /**
     * Publishes a setup held too long, on a thread of its own: the runner's may be busy setting the task up (an
     * image pull), and the timer's must not wait for the store.
     */
    private void flushWhenDue() {
        Thread.ofVirtual().name("publish-" + cfg.allocId() + "/" + name).start(() -> {
            try {
                flush();
            } catch (RuntimeException e) { // the agent stopping closed the store: the task never started
                LOG.debug("task {} of {}: its setup was not published: {}", name, cfg.allocId(), e.toString());
            }
        });
    }

    private void tell(List<TaskEvent> events) {
        TaskState snapshot = store();
        cfg.listener().taskStateChanged(name, snapshot, events);
    }

    /** Stores both states as they are now, without telling anyone (the runner stops; the task may run on). */
    TaskState store() {
        TaskState snapshot;
        TaskLocalState localNow;
        synchronized (this) {
            snapshot = recorder.snapshot();
            localNow = local;
        }
        // A full disk must not end the runner while its task runs: the store keeps what failed and writes it
        // again once it can; the allocation reports it (StateStored=False) until then.
        try {
            cfg.stateDB().putTaskLocalState(cfg.allocId(), name, localNow);
        } catch (StateStoreException unstored) {
            // kept by the store
        }
        try {
            cfg.stateDB().putTaskState(cfg.allocId(), name, snapshot);
        } catch (StateStoreException unstored) {
            // kept by the store
        }
        return snapshot;
    }
}
