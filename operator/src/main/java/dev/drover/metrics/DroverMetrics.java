package dev.drover.metrics;

import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.Gauge;
import io.prometheus.client.GaugeMetricFamily;
import io.prometheus.client.Histogram;
import io.prometheus.client.hotspot.DefaultExports;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleSupplier;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * Drover's own series (docs/metrics.md), the JVM's, and whatever else is
 * registered on {@link #registry()}. Counters that other parts already keep
 * (status writes, state store writes, Kubernetes Events) are read from them at
 * scrape time through {@link Sources}, so nothing is counted twice.
 */
public final class DroverMetrics {

    /**
     * Where the scrape-time series come from.
     *
     * @param stateWrites written, deduplicated, failed, unstored, quarantined
     * @param longestWait seconds the allocation waiting longest for a start slot has waited (0: none waits)
     */
    public record Sources(
            Supplier<Map<ClientStatus, Integer>> allocationsByStatus,
            IntSupplier allocationsWaiting,
            Supplier<long[]> statusWrites,
            Supplier<long[]> stateWrites,
            Supplier<long[]> kubeEvents,
            DoubleSupplier longestWait) {

        /** Sources where nothing ever waits long for a start slot. */
        public Sources(
                Supplier<Map<ClientStatus, Integer>> allocationsByStatus,
                IntSupplier allocationsWaiting,
                Supplier<long[]> statusWrites,
                Supplier<long[]> stateWrites,
                Supplier<long[]> kubeEvents) {
            this(allocationsByStatus, allocationsWaiting, statusWrites, stateWrites, kubeEvents, () -> 0);
        }
    }

    private final CollectorRegistry registry = new CollectorRegistry(true);
    private final Counter taskEvents = Counter.build(
                    "drover_task_events_total", "Task events recorded, by type (Received, Started, Terminated, ...).")
            .labelNames("type")
            .register(registry);
    private final Counter taskRestarts = Counter.build(
                    "drover_task_restarts_total", "Task restarts chosen by restart policies (Restarting events).")
            .register(registry);
    private final Counter allocationsFailed = Counter.build(
                    "drover_allocations_failed_total",
                    "Allocations whose client status became Failed on this agent (restored ones not counted again).")
            .register(registry);
    private final Counter hookFailures = Counter.build(
                    "drover_hook_failures_total",
                    "Alloc hooks that threw, by hook and phase (update, destroy, shutdown); the other hooks still ran.")
            .labelNames("hook", "phase")
            .register(registry);
    private final Counter oomKills = Counter.build(
                    "drover_task_oom_kills_total",
                    "Tasks ended by the kernel's OOM killer (Terminated events with oomKilled).")
            .register(registry);
    private final Gauge cgroups = Gauge.build(
                    "drover_cgroup_info", "1 for the cgroup version raw_exec tasks run in: v1, v2 or none.")
            .labelNames("version")
            .register(registry);
    private final Histogram seenToRunning = Histogram.build(
                    "drover_alloc_seen_to_running_seconds",
                    "Time from the agent's watch first delivering an allocation (waiting for a start slot included)"
                            + " to its client status first being Running.")
            .buckets(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
            .register(registry);

    private final CheckMetrics checks = new CheckMetrics().register(registry);

    public DroverMetrics(Sources sources) {
        DefaultExports.register(registry);
        BuildInfo.current().collector().register(registry);
        new ScrapeTime(sources).register(registry);
    }

    public CollectorRegistry registry() {
        return registry;
    }

    /** Counts {@code event}, and an OOM kill when it tells one. */
    public void taskEvent(TaskEvent event) {
        taskEvent(event.getType());
        if (event.getType() == TaskEventType.Terminated && Boolean.TRUE.equals(event.getOomKilled())) {
            oomKills.inc();
        }
    }

    /** The series of tasks' checks. */
    public CheckMetrics checks() {
        return checks;
    }

    /** Which cgroups raw_exec tasks run in: v1, v2, or none. */
    public void cgroupVersion(String version) {
        cgroups.clear();
        cgroups.labels(version).set(1);
    }

    public void taskEvent(TaskEventType type) {
        taskEvents.labels(type.name()).inc();
        if (type == TaskEventType.Restarting) {
            taskRestarts.inc();
        }
    }

    /** An allocation's client status became Failed. */
    public void allocationFailed() {
        allocationsFailed.inc();
    }

    public void hookFailure(String hook, String phase) {
        hookFailures.labels(hook, phase).inc();
    }

    public void seenToRunning(double seconds) {
        seenToRunning.observe(seconds);
    }

    /** The series computed when Prometheus scrapes. */
    private static final class ScrapeTime extends Collector {

        private final Sources sources;

        ScrapeTime(Sources sources) {
            this.sources = sources;
        }

        @Override
        public List<MetricFamilySamples> collect() {
            List<MetricFamilySamples> out = new ArrayList<>();
            GaugeMetricFamily allocations = new GaugeMetricFamily(
                    "drover_allocations", "Allocations this agent runs, by client status.", List.of("client_status"));
            Map<ClientStatus, Integer> counts = sources.allocationsByStatus().get();
            for (ClientStatus s : ClientStatus.values()) {
                allocations.addMetric(List.of(s.name()), counts.getOrDefault(s, 0));
            }
            out.add(allocations);
            out.add(new GaugeMetricFamily(
                    "drover_allocations_waiting",
                    "Allocations the agent has not taken on yet:" + " they wait for one of concurrentStarts' slots.",
                    sources.allocationsWaiting().getAsInt()));
            out.add(new GaugeMetricFamily(
                    "drover_allocations_waiting_longest_seconds",
                    "How long the allocation waiting longest for a start slot has waited; 0 when none waits.",
                    sources.longestWait().getAsDouble()));
            out.add(counter(
                    "drover_status_writes",
                    "Allocation status writes: written to the API server, skipped"
                            + " because nothing changed, failed (and retried).",
                    sources.statusWrites().get(),
                    "written",
                    "skipped",
                    "failed"));
            long[] state = sources.stateWrites().get();
            out.add(counter(
                    "drover_state_writes",
                    "Local state store writes: written (durably), deduplicated"
                            + " (same value as stored, no I/O), failed (e.g. a full disk; kept and written again).",
                    state,
                    "written",
                    "deduplicated",
                    "failed"));
            out.add(new GaugeMetricFamily(
                    "drover_state_unstored",
                    "State store values and deletions that failed and"
                            + " wait to be written again (retried with back-off).",
                    state.length > 3 ? state[3] : 0));
            out.add(new CounterMetricFamily(
                    "drover_state_rows_quarantined",
                    "State store entries that could not be"
                            + " read at start, moved to the store's quarantine table and left out of the restore.",
                    state.length > 4 ? state[4] : 0));
            out.add(counter(
                    "drover_kube_events",
                    "Kubernetes Events for task events: written (created or"
                            + " counted up), dropped (queue full), failed.",
                    sources.kubeEvents().get(),
                    "written",
                    "dropped",
                    "failed"));
            return out;
        }

        private static CounterMetricFamily counter(String name, String help, long[] values, String... results) {
            CounterMetricFamily f = new CounterMetricFamily(name, help, List.of("result"));
            for (int i = 0; i < results.length; i++) {
                f.addMetric(List.of(results[i]), i < values.length ? values[i] : 0);
            }
            return f;
        }
    }
}
