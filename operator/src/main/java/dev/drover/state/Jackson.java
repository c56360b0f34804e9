package dev.drover.state;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;

/**
 * The JSON factory for every Jackson mapper the agent's runners use. Jackson's
 * default keeps its read and write buffers (about 16 KB) per thread; the agent
 * serializes task state on each task runner's virtual thread, so at 1 000
 * allocations that was some 45 MB of buffers held by idle threads. This factory
 * takes buffers from one shared pool instead, as many as are in use at once.
 */
public final class Jackson {

    private Jackson() {}

    /** A new factory drawing buffers from the shared pool (mappers configure their factory, so one each). */
    public static JsonFactory factory() {
        return JsonFactory.builder()
                .recyclerPool(JsonRecyclerPools.sharedConcurrentDequePool())
                .build();
    }
}
