package dev.drover.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;

/**
 * What the agent costs once every allocation runs and nothing changes: its CPU, the status writes it makes and the
 * write requests the API server counted from it over a
 * window of {@code bench --steady S} seconds, and with {@code --http-check} the probes it made. A warm-up of one check
 * interval and a little more goes first, so that the checks' first results (each a change, and a write) are behind.
 */
final class SteadyState {

    /** Before the window: the checks' 10 s interval, their jitter, and the status writes their first results cause. */
    static final Duration WARM_UP = Duration.ofSeconds(15);

    private SteadyState() {}

    static void measure(
            ObjectNode result, Process agent, AgentProbe probe, CheckTarget target, ApiWrites api, Duration window)
            throws InterruptedException, java.io.IOException {
        Thread.sleep(WARM_UP.toMillis());
        double writesBefore = writes(probe);
        long apiBefore = ApiWrites.total(api.read());
        long probesBefore = target == null ? 0 : target.probes();
        Duration cpuBefore = Bench.cpu(agent.toHandle());
        long begin = System.nanoTime();
        Thread.sleep(window.toMillis());
        double seconds = (System.nanoTime() - begin) / 1e9;
        double cpuSeconds = Bench.cpu(agent.toHandle()).minus(cpuBefore).toNanos() / 1e9;
        double writes = writes(probe) - writesBefore;
        long apiWrites = ApiWrites.total(api.read()) - apiBefore;
        result.put("steadySeconds", Bench.round(seconds));
        result.put("steadyAgentCpuPercent", Bench.round(100 * cpuSeconds / seconds));
        result.put("steadyStatusWritesPerMinute", Bench.round(writes * 60 / seconds));
        result.put("steadyApiWritesPerMinute", Bench.round(apiWrites * 60 / seconds));
        if (target != null) {
            result.put("steadyProbesPerSecond", Bench.round((target.probes() - probesBefore) / seconds));
        }
    }

    private static double writes(AgentProbe probe) {
        return AgentProbe.sum(probe.metrics(), "drover_status_writes_total\\{result=\"written\",?\\}");
    }
}
