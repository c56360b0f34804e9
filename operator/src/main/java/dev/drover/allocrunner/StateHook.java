package dev.drover.allocrunner;

/** Removes everything stored for the allocation when it is destroyed. */
final class StateHook implements AllocHooks.Destroy {

    @Override
    public void destroy(AllocHookContext ctx) {
        ctx.stateDB().deleteAllocation(ctx.id());
    }
}
