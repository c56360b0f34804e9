package dev.drover.httpapi;

import dev.drover.state.AllocId;
import java.util.Optional;

/** The allocations this agent runs, as the agent's API finds them. */
public interface LocalAllocations {

    /** Empty when the allocation does not run here (or its API server has not confirmed it yet). */
    Optional<LocalAllocation> find(AllocId id);
}
