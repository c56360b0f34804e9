package dev.drover.allocwatcher;

import dev.drover.state.AllocId;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Waits on a previous allocation through its local runner when it ran on
 * this node, and asks {@code remote} (the API server side) otherwise; a disk
 * from another node comes through {@code disks}, claimed there.
 */
public final class LocalFirst implements PreviousAllocations {

    private final Function<AllocId, Optional<CompletableFuture<Void>>> local;
    private final PreviousAllocations remote;
    private final DiskFetcher disks;

    /**
     * @param local the terminal future of a local runner for the id, if this node runs it
     */
    public LocalFirst(
            Function<AllocId, Optional<CompletableFuture<Void>>> local, PreviousAllocations remote, DiskFetcher disks) {
        this.local = local;
        this.remote = remote;
        this.disks = disks;
    }

    /** Without fetching disks from other nodes. */
    public LocalFirst(Function<AllocId, Optional<CompletableFuture<Void>>> local, PreviousAllocations remote) {
        this(local, remote, DiskFetcher.NONE);
    }

    @Override
    public CompletableFuture<Void> terminal(AllocId id) {
        return local.apply(id).orElseGet(() -> remote.terminal(id));
    }

    @Override
    public DiskFetcher.Fetched fetchDisk(AllocId id, Claimant claimant, Path staging, Set<String> tasks, long maxBytes)
            throws IOException, InterruptedException {
        return disks.fetch(id, claimant, staging, tasks, maxBytes);
    }
}
