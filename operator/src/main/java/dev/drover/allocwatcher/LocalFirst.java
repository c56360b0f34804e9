package dev.drover.allocwatcher;

import dev.drover.state.AllocId;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Waits on a previous allocation through its local runner when it ran on
 * this node, and asks {@code remote} (the API server side) otherwise.
 */
public final class LocalFirst implements PreviousAllocations {

    private final Function<AllocId, Optional<CompletableFuture<Void>>> local;
    private final PreviousAllocations remote;

    /**
     * @param local the terminal future of a local runner for the id, if this node runs it
     */
    public LocalFirst(Function<AllocId, Optional<CompletableFuture<Void>>> local, PreviousAllocations remote) {
        this.local = local;
        this.remote = remote;
    }

    @Override
    public CompletableFuture<Void> terminal(AllocId id) {
        return local.apply(id).orElseGet(() -> remote.terminal(id));
    }
}
