package dev.drover.allocrunner;

import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.state.AllocId;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for the allocation this one replaces to be terminal (or gone), then
 * carries its data over when the ephemeral disk is sticky or migrating. A
 * migration error is soft: the tasks start with clean directories and an
 * event says why.
 */
final class PreviousAllocHook implements AllocHooks.Prerun {

    private static final Logger LOG = LoggerFactory.getLogger(PreviousAllocHook.class);

    private final PreviousAllocations previous;

    PreviousAllocHook(PreviousAllocations previous) {
        this.previous = previous;
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
        if (spec.effectiveEphemeralDisk().carriesData()) {
            String message;
            try {
                ctx.dir().migrateFrom(AllocDir.of(ctx.dataDir(), prevId), ctx.taskNames().get());
                message = "Migrated the ephemeral disk of previous allocation " + name;
            } catch (IOException | RuntimeException e) {
                message = "Could not migrate the ephemeral disk of previous allocation " + name
                        + "; starting with an empty one: " + e.getMessage();
                LOG.warn("{}: {}", ctx.id(), message);
            }
            ctx.toEveryTask().accept(TaskEvent.of(TaskEventType.TaskSetup, ctx.clock().instant()).withMessage(message));
        }
        return true;
    }
}
