package dev.drover.controller;

import dev.drover.allocrunner.AllocDir;
import dev.drover.common.UserText;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.TaskHandle;
import dev.drover.logging.LogThrottle;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStoreException;
import dev.drover.state.StoredTask;
import dev.drover.state.TaskLocalState;
import dev.drover.taskrunner.StoredHandles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What allocations no longer held leave on the node: a directory that could not be removed, a stored state the
 * store could not delete, a directory no allocation of the API server's has, and stored allocations that could not
 * be restored (with the tasks the store held handles of, which are ended first). Each is removed on the next
 * {@link #sweep}, unless an allocation of that name was taken on meanwhile (the directory is its own then).
 */
final class Leftovers {

    private static final Logger LOG = LoggerFactory.getLogger(Leftovers.class);
    /** A directory that cannot be removed is retried every GC pass: one line per allocation and hour. */
    private static final LogThrottle FAILURES = new LogThrottle(Duration.ofHours(1));
    /** How long a leftover task is given to end after SIGKILL. */
    private static final Duration KILL_WAIT = Duration.ofSeconds(10);

    private final Path dataDir;
    private final StateDB db;
    private final ConcurrentMap<AllocId, TrackedAllocation> held;
    /** Allocations destroyed (or never known) whose directory is still on disk. */
    private final Set<AllocId> left = ConcurrentHashMap.newKeySet();
    /** Stored allocations the restore could not rebuild: taken on from the API server, else left over. */
    private final Set<AllocId> unrestored = ConcurrentHashMap.newKeySet();
    /**
     * The tasks the store held handles of for allocations that could not be restored: still running, perhaps (the
     * agent stopped with them running), and ended before their directory goes when the API server no longer has
     * their allocation; an allocation it still has is taken on again, and its runner takes them over.
     */
    private final ConcurrentMap<AllocId, List<TaskHandle>> unrestoredTasks = new ConcurrentHashMap<>();

    private final DriverRegistry drivers;

    /**
     * @param held    the allocations the controller holds; a name among them is never swept
     * @param drivers what ends the tasks of an allocation that could not be restored
     */
    Leftovers(Path dataDir, StateDB db, ConcurrentMap<AllocId, TrackedAllocation> held, DriverRegistry drivers) {
        this.dataDir = dataDir;
        this.db = db;
        this.held = held;
        this.drivers = drivers;
    }

    /** Removes what {@code id} left now, or, what cannot be removed now, at the next sweep. */
    void remove(AllocId id) {
        if (!removeNow(id)) {
            left.add(id);
        }
    }

    /** A destroyed allocation's directory that is still there (it could not be removed) is swept later. */
    void noteIfLeft(AllocId id) {
        if (Files.exists(AllocDir.of(dataDir, id).root(), LinkOption.NOFOLLOW_LINKS)) {
            left.add(id);
        }
    }

    /**
     * A stored allocation that could not be restored: its directory stays until the API server is listed, and so do
     * the tasks {@code tasks} holds handles of.
     */
    void unrestored(AllocId id, Collection<StoredTask> tasks) {
        unrestored.add(id);
        List<TaskHandle> handles = new ArrayList<>();
        for (StoredTask task : tasks) {
            Map<String, String> stored =
                    task.localState().map(TaskLocalState::driverHandle).orElse(null);
            if (stored == null) {
                continue; // never started, or its start was never stored
            }
            try {
                handles.add(StoredHandles.fromStored(stored));
            } catch (RuntimeException unreadable) {
                LOG.warn(
                        "the stored handle of task {} of allocation {} cannot be read; if it still runs, it is not"
                                + " ended: {}",
                        UserText.quote(task.name()),
                        id,
                        unreadable.toString());
            }
        }
        if (!handles.isEmpty()) {
            unrestoredTasks.put(id, List.copyOf(handles));
        }
    }

    /**
     * Once the API server is listed ({@code listed}: the names it has for this node): what could not be restored
     * and directories of allocations it does not have, and nobody here holds, are left over.
     */
    void listed(Set<AllocId> listed) {
        for (AllocId id : unrestored) {
            if (!listed.contains(id)) {
                left.add(id); // not restored, and gone from the API server too: its tasks, state and directory go
            } else {
                unrestoredTasks.remove(id); // taken on again: its runner takes its tasks over
            }
        }
        unrestored.clear();
        try {
            for (AllocId id : AllocDir.all(dataDir)) {
                if (!listed.contains(id) && !held.containsKey(id)) {
                    LOG.info(
                            "the directory of allocation {} is left over (the API server has no such allocation);"
                                    + " removing it",
                            id);
                    left.add(id);
                }
            }
        } catch (IOException e) {
            LOG.warn("cannot list allocation directories for leftovers: {}", e.toString());
        }
    }

    /** Removes what is left over, except under a name taken on again meanwhile. */
    void sweep() {
        for (AllocId id : List.copyOf(left)) {
            // compute() keeps the id's allocation from being created meanwhile: a new allocation of the same name
            // must not lose the directory it is building, nor its tasks (a driver knows tasks by their names, so
            // ending an old task of the name after the new one started could end the new one's). Ending a task may
            // take a few seconds; it happens once, for an allocation that could not be restored.
            held.compute(id, (k, current) -> {
                List<TaskHandle> tasks = unrestoredTasks.remove(id);
                if (current == null) {
                    if (tasks != null) {
                        end(id, tasks);
                    }
                    if (removeNow(id)) {
                        left.remove(id);
                    }
                } else {
                    left.remove(id); // taken on again: the directory and its tasks are its own now
                }
                return current;
            });
        }
    }

    /**
     * Ends the tasks of an allocation that could not be restored and is gone from the API server, each through its
     * driver from its stored handle, as a destroy would have: its directory is about to go, and nothing else would
     * ever stop them. A task that has exited (or whose process is another one now) is left alone.
     */
    private void end(AllocId id, List<TaskHandle> tasks) {
        for (TaskHandle stored : tasks) {
            Optional<Driver> driver = drivers.find(stored.driver());
            if (driver.isEmpty()) {
                LOG.warn(
                        "task {} of allocation {} ran with driver {}, which is not enabled; if it still runs, it is"
                                + " not ended",
                        UserText.quote(stored.taskId()),
                        id,
                        UserText.quote(stored.driver()));
                continue;
            }
            try {
                TaskHandle task = driver.get().recover(stored);
                LOG.info(
                        "allocation {} could not be restored and is gone from the API server; ending its task {}",
                        id,
                        UserText.quote(stored.taskId()));
                driver.get().stop(task, KILL_WAIT, "SIGKILL");
                driver.get().destroy(task);
            } catch (DriverException gone) {
                LOG.debug("task {} of {} is not running: {}", stored.taskId(), id, gone.getMessage());
            } catch (RuntimeException broken) { // a handle missing what its driver needs: the others still end
                LOG.warn(
                        "cannot end task {} of allocation {} from its stored handle: {}",
                        UserText.quote(stored.taskId()),
                        id,
                        broken.toString());
            }
        }
    }

    /**
     * Removes the allocation's directory and stored state. Returns false when the directory is still there (it is
     * then swept again later); a deletion the store cannot write now it applies itself later.
     */
    boolean removeNow(AllocId id) {
        boolean removed = true;
        try {
            AllocDir.of(dataDir, id).destroy();
        } catch (IOException | RuntimeException ex) {
            FAILURES.log(
                    id.key(),
                    suppressed -> LOG.warn(
                            "cannot remove the directory of {}: {}; trying again" + " at the next garbage collection",
                            id,
                            ex.toString()));
            removed = false;
        }
        try {
            db.deleteAllocation(id);
        } catch (StateStoreException ex) {
            LOG.debug("the stored state of {} is deleted later: {}", id, ex.getMessage());
        }
        return removed;
    }
}
