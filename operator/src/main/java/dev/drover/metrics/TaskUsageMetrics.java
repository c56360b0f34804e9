package dev.drover.metrics;

import io.prometheus.client.Collector;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.GaugeMetricFamily;
import java.util.List;
import java.util.function.Supplier;

/**
 * The CPU and memory of each running task, read when Prometheus scrapes, as cAdvisor gives containers'
 * ({@code container_cpu_usage_seconds_total}, {@code container_memory_working_set_bytes}): {@code
 * drover_task_cpu_seconds_total}, {@code drover_task_memory_working_set_bytes} and {@code
 * drover_task_memory_limit_bytes}, labelled {@code namespace}, {@code allocation}, {@code task}. Only the tasks
 * {@link Source} reads now have series: a task that ended, or whose usage could not be read, has none, so a gone
 * task's series go with it. A task without a memory limit has no limit series.
 */
public final class TaskUsageMetrics extends Collector {

    static final String CPU = "drover_task_cpu_seconds";
    static final String WORKING_SET = "drover_task_memory_working_set_bytes";
    static final String LIMIT = "drover_task_memory_limit_bytes";

    private static final List<String> LABELS = List.of("namespace", "allocation", "task");

    /**
     * One running task's usage.
     *
     * @param memoryLimitBytes 0 when it has no memory limit
     */
    public record Usage(
            String namespace,
            String allocation,
            String task,
            double cpuSeconds,
            long workingSetBytes,
            long memoryLimitBytes) {}

    /** Reads the running tasks' usage now, bounded in time; a task it cannot read is left out. */
    public interface Source extends Supplier<List<Usage>> {}

    private final Source source;

    public TaskUsageMetrics(Source source) {
        this.source = source;
    }

    @Override
    public List<MetricFamilySamples> collect() {
        CounterMetricFamily cpu = new CounterMetricFamily(
                CPU, "CPU time the task's processes used, user and system, in seconds (its current run).", LABELS);
        GaugeMetricFamily workingSet = new GaugeMetricFamily(
                WORKING_SET,
                "Memory of the task that cannot be given back at once: its cgroup's usage less the inactive page"
                        + " cache (resident memory for a task without a cgroup).",
                LABELS);
        GaugeMetricFamily limit = new GaugeMetricFamily(
                LIMIT, "The memory limit of the task's cgroup; tasks without one have no series.", LABELS);
        for (Usage u : source.get()) {
            List<String> labels = List.of(u.namespace(), u.allocation(), u.task());
            cpu.addMetric(labels, u.cpuSeconds());
            workingSet.addMetric(labels, u.workingSetBytes());
            if (u.memoryLimitBytes() > 0) {
                limit.addMetric(labels, u.memoryLimitBytes());
            }
        }
        return List.of(cpu, workingSet, limit);
    }
}
