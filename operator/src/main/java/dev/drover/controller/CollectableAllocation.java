package dev.drover.controller;

import dev.drover.gc.Collectable;
import java.time.Instant;
import java.util.Optional;

/** A started allocation as the garbage collector sees it: once terminal, collected by destroying it here. */
record CollectableAllocation(TrackedAllocation allocation, Teardown teardown) implements Collectable {

    @Override
    public String id() {
        return allocation.id.key();
    }

    @Override
    public Optional<Instant> terminalSince() {
        return allocation.terminalSince();
    }

    @Override
    public void destroy() throws InterruptedException {
        teardown.collect(allocation);
    }
}
