package dev.drover.controller;

import dev.drover.allocrunner.AllocRunner;
import dev.drover.allocrunner.AllocRunnerConfig;
import dev.drover.allocrunner.AllocStateListener;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.state.StoredAllocation;

/** How the controller makes alloc runners, each with its own listener (tests hold a start where they need to). */
interface RunnerFactory {

    /** A runner for an allocation taken on now; its spec is stored first ({@code StateStoreException} if it cannot). */
    AllocRunner create(Allocation a, AllocStateListener listener);

    /** A runner rebuilt from what the store holds of the allocation. */
    AllocRunner restore(StoredAllocation stored, AllocStateListener listener);

    /** Runners of {@code cfg} that find their previous allocation through {@code previous}. */
    static RunnerFactory of(AllocRunnerConfig cfg, PreviousAllocations previous) {
        return new RunnerFactory() {
            @Override
            public AllocRunner create(Allocation a, AllocStateListener listener) {
                return new AllocRunner(cfg, a, listener, previous);
            }

            @Override
            public AllocRunner restore(StoredAllocation stored, AllocStateListener listener) {
                return AllocRunner.restore(cfg, stored, listener, previous);
            }
        };
    }
}
