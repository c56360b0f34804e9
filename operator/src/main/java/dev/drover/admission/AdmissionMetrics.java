package dev.drover.admission;

import io.prometheus.client.Collector;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.GaugeMetricFamily;
import java.util.List;
import java.util.Map;

/**
 * The node's allocatable, requested and free CPU and memory as gauges {@code drover_node_allocatable},
 * {@code drover_node_requested} and {@code drover_node_free}, labelled {@code resource} ({@code cpu_millis},
 * {@code memory_mb}), and the refusals by reason, read at scrape time.
 */
public final class AdmissionMetrics extends Collector {

    private final NodeAdmission admission;

    public AdmissionMetrics(NodeAdmission admission) {
        this.admission = admission;
    }

    @Override
    public List<MetricFamilySamples> collect() {
        NodeAdmission.Usage u = admission.usage();
        return List.of(
                gauge(
                        "drover_node_allocatable",
                        "CPU and memory the agent may hand out to allocations.",
                        u.allocatable()),
                gauge(
                        "drover_node_requested",
                        "CPU and memory requested by the admitted allocations that are not over yet.",
                        u.requested()),
                gauge(
                        "drover_node_free",
                        "Allocatable less requested: what a new allocation may request (negative when overcommitted).",
                        u.free()),
                refusals(admission.refusals()));
    }

    private static CounterMetricFamily refusals(Map<String, Long> byReason) {
        CounterMetricFamily c = new CounterMetricFamily(
                "drover_admission_refusals_total",
                "Allocations and updates refused because the node could not fit them, by reason (OutOfcpu, OutOfmemory,"
                        + " OutOfdevices, ResizeFailed).",
                List.of("reason"));
        for (String reason : List.of(
                NodeAdmission.OUT_OF_CPU,
                NodeAdmission.OUT_OF_MEMORY,
                NodeAdmission.OUT_OF_DEVICES,
                NodeAdmission.RESIZE_FAILED)) {
            c.addMetric(List.of(reason), byReason.getOrDefault(reason, 0L));
        }
        return c;
    }

    private static GaugeMetricFamily gauge(String name, String help, CpuMemory amount) {
        GaugeMetricFamily g = new GaugeMetricFamily(name, help, List.of("resource"));
        g.addMetric(List.of("cpu_millis"), amount.cpuMillis());
        g.addMetric(List.of("memory_mb"), amount.memoryMB());
        return g;
    }
}
