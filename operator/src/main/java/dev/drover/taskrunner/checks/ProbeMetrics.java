package dev.drover.taskrunner.checks;

import io.prometheus.client.Collector;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.GaugeMetricFamily;
import java.util.List;

/**
 * How the agent's one check scheduler keeps up, read at scrape time: {@code drover_check_probes} (probes running now,
 * and waiting for one of the bounded slots) and {@code drover_check_probes_skipped_total} (ticks skipped because the
 * check's previous probe still ran, {@code busy}, or still waited for a slot, {@code saturated}) and {@code
 * drover_check_stale} (checks whose status is stale: their latest probe could not run for lack of a slot). Skips
 * that grow say the checks ask more than the slots or the tasks can answer in time.
 */
public final class ProbeMetrics extends Collector {

    private final CheckScheduler scheduler;

    public ProbeMetrics(CheckScheduler scheduler) {
        this.scheduler = scheduler;
    }

    @Override
    public List<MetricFamilySamples> collect() {
        GaugeMetricFamily probes = new GaugeMetricFamily(
                "drover_check_probes",
                "Health check probes running now, and waiting for one of the agent's probe slots.",
                List.of("state"));
        probes.addMetric(List.of("running"), scheduler.runningProbes());
        probes.addMetric(List.of("waiting"), scheduler.waitingProbes());
        CounterMetricFamily skipped = new CounterMetricFamily(
                "drover_check_probes_skipped_total",
                "Probe ticks skipped because the check's previous probe still ran (busy) or still waited for a slot"
                        + " (saturated).",
                List.of("reason"));
        skipped.addMetric(List.of("busy"), scheduler.skippedBusy());
        skipped.addMetric(List.of("saturated"), scheduler.skippedSaturated());
        GaugeMetricFamily stale = new GaugeMetricFamily(
                "drover_check_stale",
                "Checks whose latest probe could not run for lack of a probe slot: their status is stale until their"
                        + " next probe.",
                scheduler.staleChecks());
        return List.of(probes, skipped, stale);
    }
}
