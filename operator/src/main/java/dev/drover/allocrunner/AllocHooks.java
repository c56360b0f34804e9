package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.Allocation;

/**
 * The phases of an alloc runner that hooks take part in. A hook implements
 * only the phases it needs; the runner calls them in list order. In the update,
 * destroy and shutdown phases hooks are isolated: one that throws is logged and
 * counted, and the others run all the same.
 */
public final class AllocHooks {

    private AllocHooks() {}

    /** Any alloc hook: it implements one or more of the phase interfaces below. */
    public interface Hook {
        /** What logs and the {@code drover_hook_failures_total} metric call it. */
        default String name() {
            return getClass().getSimpleName();
        }
    }

    /** Before any task starts. Returns false when the runner is stopped meanwhile and must not go on. */
    public interface Prerun extends Hook {
        boolean prerun(AllocHookContext ctx) throws Exception;
    }

    /** Every task is dead for good (the allocation is terminal): what only running tasks used may go. */
    public interface Postrun extends Hook {
        void postrun(AllocHookContext ctx);
    }

    /** A newer spec that keeps the allocation running (not Stop). */
    public interface Update extends Hook {
        void update(AllocHookContext ctx, Allocation newer);
    }

    /** The allocation is deleted: after its tasks are dead. Best effort; should not throw. */
    public interface Destroy extends Hook {
        void destroy(AllocHookContext ctx);
    }

    /** The agent stops; tasks keep running. */
    public interface Shutdown extends Hook {
        void shutdown(AllocHookContext ctx);
    }
}
