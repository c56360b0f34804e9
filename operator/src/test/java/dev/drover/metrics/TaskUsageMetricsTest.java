package dev.drover.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.client.CollectorRegistry;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TaskUsageMetricsTest {

    final List<TaskUsageMetrics.Usage> running = new ArrayList<>();
    final CollectorRegistry registry = new CollectorRegistry();

    TaskUsageMetricsTest() {
        new TaskUsageMetrics(() -> List.copyOf(running)).register(registry);
    }

    Double sample(String name, String alloc, String task) {
        return registry.getSampleValue(
                name, new String[] {"namespace", "allocation", "task"}, new String[] {"default", alloc, task});
    }

    @Test
    void eachRunningTaskHasItsCpuWorkingSetAndLimitLabelledWithItsAllocation() {
        running.add(new TaskUsageMetrics.Usage("default", "web", "main", 2.5, 8 << 20, 64 << 20));

        assertThat(sample("drover_task_cpu_seconds_total", "web", "main")).isEqualTo(2.5);
        assertThat(sample("drover_task_memory_working_set_bytes", "web", "main"))
                .isEqualTo((double) (8 << 20));
        assertThat(sample("drover_task_memory_limit_bytes", "web", "main")).isEqualTo((double) (64 << 20));
    }

    @Test
    void aTaskWithoutAMemoryLimitHasNoLimitSeries() {
        running.add(new TaskUsageMetrics.Usage("default", "web", "main", 1, 4096, 0));

        assertThat(sample("drover_task_memory_working_set_bytes", "web", "main"))
                .isEqualTo(4096.0);
        assertThat(sample("drover_task_memory_limit_bytes", "web", "main")).isNull();
    }

    @Test
    void aTaskThatIsGoneLeavesNoSeriesBehind() throws Exception {
        running.add(new TaskUsageMetrics.Usage("default", "web", "main", 1, 4096, 1 << 20));
        running.add(new TaskUsageMetrics.Usage("default", "batch", "main", 1, 4096, 1 << 20));
        assertThat(sample("drover_task_cpu_seconds_total", "batch", "main")).isNotNull();

        running.removeIf(u -> u.allocation().equals("batch"));

        StringWriter scrape = new StringWriter();
        Exposition.write(io.prometheus.client.exporter.common.TextFormat.CONTENT_TYPE_004, scrape, registry);
        assertThat(scrape.toString()).doesNotContain("allocation=\"batch\"").contains("allocation=\"web\"");
    }
}
