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

    /** The disk of an allocation that did not run on this node ({@link DiskFetcher#fetch}). */
    default DiskFetcher.Fetched fetchDisk(AllocId id, Path staging, Set<String> tasks, long maxBytes)
            throws IOException, InterruptedException {
        return DiskFetcher.NONE.fetch(id, staging, tasks, maxBytes);
    }

    /**
     * Claims the disk of {@code previous} for {@code claimant} before anything of it is carried: a previous
     * allocation's disk goes to at most one successor, ever. Returns when the claim is {@code claimant}'s (made now,
     * or made by it before, e.g. before an agent restart); throws {@link DiskClaimedException} when another
     * allocation holds it, and an {@link IOException} saying why when it cannot be made (the previous allocation
     * is gone, the API server cannot be reached). Agents with no API server (tests) have no one to share a disk
     * with: the default grants every claim.
     *
     * @param claimant the successor: its name and uid
     */
    default void claimDisk(AllocId previous, Claimant claimant) throws IOException, InterruptedException {}

    /** An allocation that claims a previous allocation's disk; {@code uid} tells it from a later one of its name. */
    record Claimant(String name, String uid) {

        /** What the claim holds: {@code NAME/UID}, or the name alone when there is no uid. */
        public String value() {
            return uid == null || uid.isEmpty() ? name : name + "/" + uid;
        }

        /** The name part of a stored claim. */
        public static String nameOf(String value) {
            int slash = value.indexOf('/');
            return slash < 0 ? value : value.substring(0, slash);
        }
    }

    /** For agents with nothing to wait on (and tests): every allocation counts as gone. */
    PreviousAllocations NONE = id -> CompletableFuture.completedFuture(null);
}
