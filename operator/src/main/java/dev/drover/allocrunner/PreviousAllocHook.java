package dev.drover.allocrunner;

import dev.drover.allocwatcher.Claimant;
import dev.drover.allocwatcher.DiskClaimedException;
import dev.drover.allocwatcher.DiskClaims;
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
 * disk is claimed first, where it is ({@link DiskClaims} in the previous
 * allocation's directory; the other node's agent claims it before it hands it
 * over): one successor takes it, a second gets a {@value #DISK_CLAIMED} Warning
 * and nothing. A migration error is soft, as in Nomad: the tasks start with
 * clean directories, and a {@value #MIGRATION_FAILED} Warning and the tasks'
 * event say why.
 */
final class PreviousAllocHook implements AllocHooks.Prerun {

    private static final Logger LOG = LoggerFactory.getLogger(PreviousAllocHook.class);

    /** The reason of the Warning Event a successor gets when another one claimed the disk first. */
    static final String DISK_CLAIMED = "DiskAlreadyClaimed";
    /** The reason of the Warning Event a successor gets when the disk could not be carried over. */
    static final String MIGRATION_FAILED = "DiskMigrationFailed";

    private final PreviousAllocations previous;

    PreviousAllocHook(PreviousAllocations previous) {
        this.previous = previous;
    }

    /**
     * Moves the previous allocation's disk here: by a rename when it ran on this node, else, when the disk
     * migrates, from the agent of the node it ran on; first the disk is claimed, and it goes to one successor only.
     * Returns the message for the tasks' event.
     */
    private String carryOver(AllocHookContext ctx, AllocId prevId, EphemeralDisk.Resolved disk)
            throws InterruptedException {
        List<String> tasks = ctx.taskNames().get();
        AllocDir local = AllocDir.of(ctx.dataDir(), prevId);
        boolean here = Files.isDirectory(local.root(), LinkOption.NOFOLLOW_LINKS);
        if (!here && !disk.migrate()) {
            return "Previous allocation " + prevId.name() + " did not run on this node and a sticky disk stays on its"
                    + " node; starting with an empty one (set ephemeralDisk.migrate to carry it between nodes)";
        }
        var meta = ctx.alloc().get().getMetadata();
        Claimant claimant = new Claimant(meta.getName(), meta.getUid());
        if (here) {
            try {
                DiskClaims.claim(local.root(), claimant);
                ctx.dir().migrateFrom(local, tasks);
                return "Migrated the ephemeral disk of previous allocation " + prevId.name();
            } catch (DiskClaimedException e) {
                return claimed(ctx, prevId, e);
            } catch (IOException | RuntimeException e) {
                LOG.warn("{}: migrating from {} failed: {}", ctx.id(), prevId, e.toString());
                return failed(ctx, prevId, e);
            }
        }
        Path staging = null;
        try {
            staging = ctx.dir().newStaging();
            DiskFetcher.Fetched fetched =
                    previous.fetchDisk(prevId, claimant, staging, Set.copyOf(tasks), (long) disk.sizeMB() << 20);
            ctx.dir().adopt(staging, tasks);
            return "Migrated the ephemeral disk of previous allocation " + prevId.name() + " from node "
                    + fetched.node() + " (" + fetched.bytes() + " bytes)";
        } catch (IOException | RuntimeException e) {
            if (staging != null) {
                try {
                    ctx.dir().discard(staging);
                } catch (IOException | RuntimeException cleanup) {
                    LOG.warn("{}: cannot remove {}: {}", ctx.id(), staging, cleanup.toString());
                }
            }
            if (e instanceof DiskClaimedException claimed) {
                return claimed(ctx, prevId, claimed);
            }
            LOG.warn("{}: fetching the disk of {} failed: {}", ctx.id(), prevId, e.toString());
            return failed(ctx, prevId, e);
        }
    }

    private static String claimed(AllocHookContext ctx, AllocId prevId, DiskClaimedException e) {
        String message = "Not taking the ephemeral disk of previous allocation " + prevId.name()
                + "; starting with an empty one: " + e.getMessage();
        LOG.warn("{}: {}", ctx.id(), message);
        ctx.warnings().warn(DISK_CLAIMED, message);
        return message;
    }

    private static String failed(AllocHookContext ctx, AllocId prevId, Exception e) {
        String message = "Could not migrate the ephemeral disk of previous allocation " + prevId.name()
                + "; starting with an empty one: " + e.getMessage();
        ctx.warnings().warn(MIGRATION_FAILED, message);
        return message;
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
