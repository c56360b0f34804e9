package dev.drover.controller;

import dev.drover.allocrunner.AllocDir;
import dev.drover.logging.LogThrottle;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What allocations no longer held leave on the node: a directory that could not be removed, a stored state the
 * store could not delete, a directory no allocation of the API server's has, and stored allocations that could not
 * be restored. Each is removed on the next {@link #sweep}, unless an allocation of that name was taken on meanwhile
 * (the directory is its own then).
 */
final class Leftovers {

    private static final Logger LOG = LoggerFactory.getLogger(Leftovers.class);
    /** A directory that cannot be removed is retried every GC pass: one line per allocation and hour. */
    private static final LogThrottle FAILURES = new LogThrottle(Duration.ofHours(1));

    private final Path dataDir;
    private final StateDB db;
    private final ConcurrentMap<AllocId, TrackedAllocation> held;
    /** Allocations destroyed (or never known) whose directory is still on disk. */
    private final Set<AllocId> left = ConcurrentHashMap.newKeySet();
    /** Stored allocations the restore could not rebuild: taken on from the API server, else left over. */
    private final Set<AllocId> unrestored = ConcurrentHashMap.newKeySet();

    /** @param held the allocations the controller holds; a name among them is never swept */
    Leftovers(Path dataDir, StateDB db, ConcurrentMap<AllocId, TrackedAllocation> held) {
        this.dataDir = dataDir;
        this.db = db;
        this.held = held;
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

    /** A stored allocation that could not be restored: its directory stays until the API server is listed. */
    void unrestored(AllocId id) {
        unrestored.add(id);
    }

    /**
     * Once the API server is listed ({@code listed}: the names it has for this node): what could not be restored
     * and directories of allocations it does not have, and nobody here holds, are left over.
     */
    void listed(Set<AllocId> listed) {
        for (AllocId id : unrestored) {
            if (!listed.contains(id)) {
                left.add(id); // not restored, and gone from the API server too: its state and directory go
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
            // must not lose the directory it is building.
            held.compute(id, (k, current) -> {
                if (current == null && removeNow(id)) {
                    left.remove(id);
                } else if (current != null) {
                    left.remove(id); // taken on again: the directory is its own now
                }
                return current;
            });
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
