package dev.drover.state;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.module.blackbird.BlackbirdModule;

/**
 * The JSON factory for every Jackson mapper the agent's runners use. Jackson's
 * default keeps its read and write buffers (about 16 KB) per thread; the agent
 * serializes task state on each task runner's virtual thread, so at 1 000
 * allocations that was some 45 MB of buffers held by idle threads. This factory
 * takes buffers from one shared pool instead, as many as are in use at once.
 *
 * <p>The agent's mappers also read and write bean properties through Jackson's
 * Blackbird module (generated lambdas) rather than reflection: the agent runs on
 * C1 alone, which does not inline a reflective call, and reflection was the
 * largest single share of its serialization time. An allocation's short string
 * values are read shared ({@link SharedStrings}).
 */
public final class Jackson {

    private Jackson() {}

    /** A new factory drawing buffers from the shared pool (mappers configure their factory, so one each). */
    public static JsonFactory factory() {
        return JsonFactory.builder()
                .recyclerPool(JsonRecyclerPools.sharedConcurrentDequePool())
                .build();
    }

    /** A mapper on {@link #factory()} with the Blackbird accessors. */
    public static ObjectMapper mapper() {
        return mapper(factory());
    }

    /** A mapper on {@code factory} with the Blackbird accessors. */
    public static ObjectMapper mapper(JsonFactory factory) {
        return builder(factory).build();
    }

    /**
     * A mapper builder on {@code factory} with the Blackbird accessors and {@link SharedStrings}, for mappers
     * configured further.
     */
    public static JsonMapper.Builder builder(JsonFactory factory) {
        return JsonMapper.builder(factory)
                .addModule(SharedStrings.AGENT.module(SharedStrings::allocationPart)) // before Blackbird: see there
                .addModule(new BlackbirdModule());
    }
}
