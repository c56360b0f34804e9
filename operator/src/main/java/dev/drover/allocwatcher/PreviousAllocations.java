package dev.drover.allocwatcher;

import dev.drover.state.AllocId;
import java.util.concurrent.CompletableFuture;

/** Tells when an allocation that another one replaces is done. */
public interface PreviousAllocations {

    /** Completes when the allocation is terminal, or at once when it is gone or unknown. */
    CompletableFuture<Void> terminal(AllocId id);

    /** For agents with nothing to wait on (and tests): every allocation counts as gone. */
    PreviousAllocations NONE = id -> CompletableFuture.completedFuture(null);
}
