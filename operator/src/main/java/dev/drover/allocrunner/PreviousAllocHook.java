package dev.drover.allocrunner;

import dev.drover.allocwatcher.DiskClaimedException;
import dev.drover.allocwatcher.DiskFetcher;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.EphemeralDisk;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.state.AllocId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for the allocation this one replaces to be terminal (or gone), then
 * carries its data over when the ephemeral disk is sticky or migrating: from
 * this node's directory, or (migrate) from the agent of the node it ran on. The
 * disk is claimed first ({@link PreviousAllocations#claimDisk}): one successor
 * takes it, a second gets a Warning and nothing. A migration error is soft: the
 * tasks start with clean directories and an event says why.
 */
final class PreviousAllocHook implements AllocHooks.Prerun {

    private static final Logger LOG = LoggerFactory.getLogger(PreviousAllocHook.class);

    /** The reason of the Warning Event a successor gets when another one claimed the disk first. */
    static final String DISK_CLAIMED = "DiskAlreadyClaimed";

    private final PreviousAllocations previous;

    PreviousAllocHook(PreviousAllocations previous) {
        this.previous = previous;
    }

    /**
     * Moves the previous allocation's disk here: by a rename when it ran on this node, else, when the disk
     * migrates, from the agent of the node it ran on; first it claims the disk, which goes to one successor only.
     * Returns the message for the tasks' event.
     */
    private String carryOver(AllocHookContext ctx, AllocId prevId, EphemeralDisk.Resolved disk)
            throws InterruptedException {
        List<String> tasks = ctx.taskNames().get();
        AllocDir local = AllocDir.of(ctx.dataDir(), prevId);
        String failure = "Could not migrate the ephemeral disk of previous allocation " + prevId.name()
                + "; starting with an empty one: ";
        boolean here = Files.isDirectory(local.root(), LinkOption.NOFOLLOW_LINKS);
        if (!here && !disk.migrate()) {
            return "Previous allocation " + prevId.name() + " did not run on this node and a sticky disk stays on its"
                    + " node; starting with an empty one (set ephemeralDisk.migrate to carry it between nodes)";
        }
        var meta = ctx.alloc().get().getMetadata();
        try {
            previous.claimDisk(prevId, new PreviousAllocations.Claimant(meta.getName(), meta.getUid()));
        } catch (DiskClaimedException e) {
            String message = "Not taking the ephemeral disk of previous allocation " + prevId.name()
                    + "; starting with an empty one: " + e.getMessage();
            LOG.warn("{}: {}", ctx.id(), message);
            ctx.warnings().warn(DISK_CLAIMED, message);
            return message;
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: claiming the disk of {} failed: {}", ctx.id(), prevId, e.toString());
            return failure + e.getMessage();
        }
        if (here) {
            try {
                ctx.dir().migrateFrom(local, tasks);
                return "Migrated the ephemeral disk of previous allocation " + prevId.name();
            } catch (IOException | RuntimeException e) {
                LOG.warn("{}: migrating from {} failed: {}", ctx.id(), prevId, e.toString());
                return failure + e.getMessage();
            }
        }
        Path staging = null;
        try {
            staging = ctx.dir().newStaging();
            DiskFetcher.Fetched fetched =
                    previous.fetchDisk(prevId, staging, Set.copyOf(tasks), (long) disk.sizeMB() << 20);
            ctx.dir().adopt(staging, tasks);
            return "Migrated the ephemeral disk of previous allocation " + prevId.name() + " from node "
                    + fetched.node() + " (" + fetched.bytes() + " bytes)";
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: fetching the disk of {} failed: {}", ctx.id(), prevId, e.toString());
            if (staging != null) {
                try {
                    ctx.dir().discard(staging);
                } catch (IOException | RuntimeException cleanup) {
                    LOG.warn("{}: cannot remove {}: {}", ctx.id(), staging, cleanup.toString());
                }
            }
            return failure + e.getMessage();
        }
    }

    @Override
    public boolean prerun(AllocHookContext ctx) throws InterruptedException {
        var spec = ctx.alloc().get().getSpec();
        String name = spec.getPreviousAllocation();
        if (name == null || ctx.restored()) {
            return true; // a restored allocation waited and migrated before the agent restarted
        }
        AllocId prevId = new AllocId(ctx.id().namespace(), name);
        CompletableFuture<Void> done = previous.terminal(prevId);
        while (!done.isDone()) {
            if (ctx.stopping().getAsBoolean()) {
                done.cancel(false); // stop watching
                return false;
            }
            try {
                done.get(200, TimeUnit.MILLISECONDS);
            } catch (TimeoutException | ExecutionException e) {
                // keep waiting; a failed lookup ends the wait below as "gone"
            }
        }
        var disk = spec.effectiveEphemeralDisk();
        if (disk.carriesData()) {
            String message = carryOver(ctx, prevId, disk);
            ctx.toEveryTask()
                    .accept(TaskEvent.of(TaskEventType.TaskSetup, ctx.clock().instant())
                            .withMessage(message));
        }
        return true;
    }
}
