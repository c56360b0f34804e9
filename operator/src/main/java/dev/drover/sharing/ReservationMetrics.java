package dev.drover.sharing;

import dev.drover.admission.CpuMemory;
import io.prometheus.client.Collector;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.GaugeMetricFamily;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code nodeSharing: resize}: the resizes of the reservation container by what they came to
 * ({@code drover_reservation_resizes_total}, label {@code outcome}) and what the kubelet has accepted on it
 * ({@code drover_reservation_booked}, label {@code resource}), read at scrape time.
 */
public final class ReservationMetrics extends Collector {

    private final PodReservation reservation;

    public ReservationMetrics(PodReservation reservation) {
        this.reservation = reservation;
    }

    @Override
    public List<MetricFamilySamples> collect() {
        CounterMetricFamily resizes = new CounterMetricFamily(
                "drover_reservation_resizes_total",
                "Resizes of the agent Pod's reservation container, by what the kubelet answered (accepted, deferred,"
                        + " infeasible) or failed.",
                List.of("outcome"));
        for (Map.Entry<PodReservation.Outcome, Long> e : reservation.resizes().entrySet()) {
            resizes.addMetric(List.of(e.getKey().name().toLowerCase(Locale.ROOT)), e.getValue());
        }
        CpuMemory booked = reservation.booked();
        GaugeMetricFamily gauge = new GaugeMetricFamily(
                "drover_reservation_booked",
                "CPU and memory the kubelet has accepted on the reservation container: what kube-scheduler counts for"
                        + " Drover's allocations.",
                List.of("resource"));
        gauge.addMetric(List.of("cpu_millis"), booked.cpuMillis());
        gauge.addMetric(List.of("memory_mb"), booked.memoryMB());
        return List.of(resizes, gauge);
    }
}
