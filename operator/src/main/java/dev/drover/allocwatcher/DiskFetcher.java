package dev.drover.allocwatcher;

import dev.drover.state.AllocId;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;

/** Brings the ephemeral disk of an allocation that ran on another node from that node's agent. */
@FunctionalInterface
public interface DiskFetcher {

    /** What a fetch brought: from which node, and how many bytes of file content. */
    record Fetched(String node, long bytes) {}

    /**
     * Claims the disk of {@code previous} for {@code claimant} on the node that has it (the claim is kept there, and
     * a disk goes to one successor only) and unpacks it into {@code staging} ({@link Snapshots#unpack}:
     * {@code alloc/data} and each of {@code tasks}' {@code local/}, at most {@code maxBytes} of content). Throws
     * {@link DiskClaimedException} when another successor holds the disk, else with a message that says why not, for
     * the event the user reads; what was unpacked so far is the caller's to discard.
     */
    Fetched fetch(AllocId previous, Claimant claimant, Path staging, Set<String> tasks, long maxBytes)
            throws IOException, InterruptedException;

    /** For agents that do not fetch (no API, and tests). */
    DiskFetcher NONE = (previous, claimant, staging, tasks, maxBytes) -> {
        throw new IOException("this agent does not fetch disks from other nodes (its API is off)");
    };
}
