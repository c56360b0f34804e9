package dev.drover.metrics;

import io.prometheus.client.Collector;
import io.prometheus.client.GaugeMetricFamily;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@code drover_agent_ready}: 1 when {@code /readyz} answers 200, 0 when it answers 503. Prometheus scrapes an agent
 * that is not ready all the same, so an alert can tell "up but not serving" from "down".
 */
public final class ReadyMetric extends Collector {

    private final Supplier<Optional<String>> ready;

    /** @param ready empty when ready, else why not (what {@code /readyz} answers) */
    public ReadyMetric(Supplier<Optional<String>> ready) {
        this.ready = ready;
    }

    @Override
    public List<MetricFamilySamples> collect() {
        return List.of(new GaugeMetricFamily(
                "drover_agent_ready",
                "1 when the agent is ready (/readyz answers 200: allocations restored, Allocation watch synced and"
                        + " healthy), 0 when not.",
                ready.get().isEmpty() ? 1 : 0));
    }
}
