package dev.drover.allocrunner;

import dev.drover.state.StateStoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes everything stored for the allocation when it is destroyed. A store that cannot write (a full disk)
 * keeps the deletion and applies it once it can, so the destroy completes anyway.
 */
final class StateHook implements AllocHooks.Destroy {

    private static final Logger LOG = LoggerFactory.getLogger(StateHook.class);

    @Override
    public void destroy(AllocHookContext ctx) {
        try {
            ctx.stateDB().deleteAllocation(ctx.id());
        } catch (StateStoreException e) {
            LOG.debug("the stored state of {} is deleted later: {}", ctx.id(), e.getMessage());
        }
    }
}
