package dev.drover.allocwatcher;

import dev.drover.state.AllocId;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** Tells when an allocation that another one replaces is done, and brings its disk when it ran elsewhere. */
public interface PreviousAllocations {

    /** Completes when the allocation is terminal, or at once when it is gone or unknown. */
    CompletableFuture<Void> terminal(AllocId id);

    /** The disk of an allocation that did not run on this node, claimed for {@code claimant} ({@link DiskFetcher#fetch}). */
    default DiskFetcher.Fetched fetchDisk(AllocId id, Claimant claimant, Path staging, Set<String> tasks, long maxBytes)
            throws IOException, InterruptedException {
        return DiskFetcher.NONE.fetch(id, claimant, staging, tasks, maxBytes);
    }

    /** For agents with nothing to wait on (and tests): every allocation counts as gone. */
    PreviousAllocations NONE = id -> CompletableFuture.completedFuture(null);
}
