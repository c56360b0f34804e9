package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The agent container's memory: from the allocations a node is expected to run, unless set (docs/install.md). */
class ChartMemoryTest {

    private static Container agent(Map<String, Object> sets) {
        return DroverChart.render(ValueSet.DEFAULTS, sets).agent();
    }

    private static void hasMemory(Container agent, String request, String limit) {
        assertThat(agent.getResources().getRequests()).containsEntry("memory", new Quantity(request));
        assertThat(agent.getResources().getLimits()).containsEntry("memory", new Quantity(limit));
    }

    @Test
    void byDefaultTheMemoryFitsAThousandAllocations() {
        Container agent = agent(Map.of());
        hasMemory(agent, "254Mi", "254Mi"); // 160 MiB + 1 000 × 96 KiB
        assertThat(agent.getResources().getRequests()).containsEntry("cpu", new Quantity("50m"));
    }

    @Test
    void theMemoryGrowsWithTheExpectedAllocationsRoundedUpToMebibytes() {
        hasMemory(agent(Map.of("agent.expectedAllocations", 10_000)), "1098Mi", "1098Mi");
        hasMemory(agent(Map.of("agent.expectedAllocations", 0)), "160Mi", "160Mi");
        hasMemory(agent(Map.of("agent.expectedAllocations", 1)), "161Mi", "161Mi");
        hasMemory(
                agent(Map.of(
                        "agent.expectedAllocations", 500,
                        "agent.memory.baseMi", 200,
                        "agent.memory.perAllocationKi", 128)),
                "263Mi",
                "263Mi");
    }

    @Test
    void memorySetInResourcesWinsAndTheOtherHalfFollowsIt() {
        hasMemory(agent(Map.of("resources.limits.memory", "1Gi")), "1Gi", "1Gi");
        hasMemory(agent(Map.of("resources.requests.memory", "300Mi")), "300Mi", "300Mi");
        hasMemory(
                agent(Map.of("resources.requests.memory", "300Mi", "resources.limits.memory", "600Mi")),
                "300Mi",
                "600Mi");
    }
}
