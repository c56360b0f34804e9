package dev.drover.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.prometheus.client.CollectorRegistry;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** JOSDK's callbacks, as JOSDK 5.3 names them, land in the series docs/metrics.md lists. */
class JosdkMetricsTest {

    private static final Map<String, Object> META = Map.of(JosdkMetrics.CONTROLLER, "allocations");

    private final CollectorRegistry registry = new CollectorRegistry();
    private final JosdkMetrics metrics = new JosdkMetrics(registry);
    private final Allocation allocation = allocation();

    @Test
    void aReconcileIsCountedFromSubmittedToSucceededAndIsNotRunningAfter() {
        metrics.eventReceived(new Event(ResourceID.fromResource(allocation)), META);
        metrics.reconciliationSubmitted(allocation, null, META);
        metrics.reconciliationStarted(allocation, META);
        assertThat(value("operator_sdk_reconciliations_executions")).isEqualTo(1.0);
        metrics.reconciliationSucceeded(allocation, META);
        metrics.reconciliationFinished(allocation, null, META);

        assertThat(registry.getSampleValue(
                        "operator_sdk_events_received_total",
                        new String[] {"controller", "event", "action"},
                        new String[] {"allocations", "Event", ""}))
                .isEqualTo(1.0);
        assertThat(value("operator_sdk_reconciliations_started_total")).isEqualTo(1.0);
        assertThat(value("operator_sdk_reconciliations_success_total")).isEqualTo(1.0);
        assertThat(value("operator_sdk_reconciliations_executions")).isZero();
    }

    @Test
    void aFailureIsCountedByItsCauseAndACleanupOnce() {
        metrics.reconciliationFailed(allocation, null, new RuntimeException(new IllegalStateException("broken")), META);
        metrics.cleanupDone(ResourceID.fromResource(allocation), META);

        assertThat(registry.getSampleValue(
                        "operator_sdk_reconciliations_failed_total",
                        new String[] {"controller", "exception"},
                        new String[] {"allocations", "IllegalStateException"}))
                .isEqualTo(1.0);
        assertThat(value("operator_sdk_events_delete_total")).isEqualTo(1.0);
    }

    private double value(String series) {
        Double value = registry.getSampleValue(series, new String[] {"controller"}, new String[] {"allocations"});
        return value == null ? 0 : value;
    }

    private static Allocation allocation() {
        Allocation a = new Allocation();
        a.setMetadata(
                new ObjectMetaBuilder().withNamespace("default").withName("web").build());
        return a;
    }
}
