package dev.drover.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;

/**
 * What the agent costs once every allocation runs and nothing changes: its CPU and the status writes it makes over a
 * window of {@code bench --steady S} seconds, and with {@code --http-check} the probes it made. A warm-up of one check
 * interval and a little more goes first, so that the checks' first results (each a change, and a write) are behind.
 */
final class SteadyState {

    /** Before the window: the checks' 10 s interval, their jitter, and the status writes their first results cause. */
    static final Duration WARM_UP = Duration.ofSeconds(15);

    private SteadyState() {}

    static void measure(ObjectNode result, Process agent, AgentProbe probe, CheckTarget target, Duration window)
            throws InterruptedException {
        Thread.sleep(WARM_UP.toMillis());
        double writesBefore = writes(probe);
        long probesBefore = target == null ? 0 : target.probes();
        Duration cpuBefore = cpu(agent);
        long begin = System.nanoTime();
        Thread.sleep(window.toMillis());
        double seconds = (System.nanoTime() - begin) / 1e9;
        double cpuSeconds = cpu(agent).minus(cpuBefore).toNanos() / 1e9;
        double writes = writes(probe) - writesBefore;
        result.put("steadySeconds", round(seconds));
        result.put("steadyAgentCpuPercent", round(100 * cpuSeconds / seconds));
        result.put("steadyStatusWritesPerMinute", round(writes * 60 / seconds));
        if (target != null) {
            result.put("steadyProbesPerSecond", round((target.probes() - probesBefore) / seconds));
        }
    }

    private static double writes(AgentProbe probe) {
        return AgentProbe.sum(probe.metrics(), "drover_status_writes_total\\{result=\"written\",?\\}");
    }

    private static Duration cpu(Process agent) {
        return agent.info().totalCpuDuration().orElse(Duration.ZERO);
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }
}
