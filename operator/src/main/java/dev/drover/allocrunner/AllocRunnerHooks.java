package dev.drover.allocrunner;

import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An alloc runner's hooks, in the order their phases run: the allocation's directory, the previous allocation, the
 * stored state, then the agent's own. The runner calls one phase at a time; in the update, destroy and shutdown
 * phases hooks are isolated: one that throws is logged and reported, and the hooks after it run all the same.
 */
final class AllocRunnerHooks {

    private static final Logger LOG = LoggerFactory.getLogger(AllocRunnerHooks.class);

    /** Told of a hook that threw in an isolated phase. */
    @FunctionalInterface
    interface Failures {
        void failed(String hook, String phase, RuntimeException failure);
    }

    private final List<AllocHooks.Hook> hooks;
    private final AllocHookContext ctx;
    private final Failures failures;

    AllocRunnerHooks(
            PreviousAllocations previous,
            NetworkHook network,
            List<AllocHooks.Hook> agentHooks,
            AllocHookContext ctx,
            Failures failures) {
        List<AllocHooks.Hook> all =
                new ArrayList<>(List.of(new AllocDirHook(), new PreviousAllocHook(previous), new StateHook(), network));
        all.addAll(agentHooks);
        this.hooks = List.copyOf(all);
        this.ctx = ctx;
        this.failures = failures;
    }

    /** Runs the prerun hooks in order; false when one finds the runner stopped meanwhile (the rest do not run). */
    boolean prerun() throws Exception {
        for (AllocHooks.Hook hook : hooks) {
            if (hook instanceof AllocHooks.Prerun prerun && !prerun.prerun(ctx)) {
                return false;
            }
        }
        return true;
    }

    /** Every task is dead for good; isolated as destroy is. */
    void postrun() {
        each(AllocHooks.Postrun.class, "postrun", hook -> hook.postrun(ctx));
    }

    void update(Allocation newer) {
        each(AllocHooks.Update.class, "update", hook -> hook.update(ctx, newer));
    }

    void destroy() {
        each(AllocHooks.Destroy.class, "destroy", hook -> hook.destroy(ctx));
    }

    void shutdown() {
        each(AllocHooks.Shutdown.class, "shutdown", hook -> hook.shutdown(ctx));
    }

    private <H extends AllocHooks.Hook> void each(Class<H> phase, String phaseName, Consumer<H> call) {
        for (AllocHooks.Hook hook : hooks) {
            if (!phase.isInstance(hook)) {
                continue;
            }
            try {
                call.accept(phase.cast(hook));
            } catch (RuntimeException e) {
                LOG.warn(
                        "allocation {}: the {} hook {} failed; the other hooks run all the same",
                        ctx.id(),
                        phaseName,
                        hook.name(),
                        e);
                failures.failed(hook.name(), phaseName, e);
            }
        }
    }
}
