package dev.drover.metrics;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceEvent;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.Gauge;
import io.prometheus.client.Histogram;
import java.util.Map;

/**
 * JOSDK's {@link Metrics} callbacks (5.3 names) as Prometheus series
 * named like JOSDK's own Micrometer binding ({@code operator_sdk_*}). Labels
 * are the controller's name and, for events, the kind of event: never a
 * resource name, so the number of series stays fixed.
 */
public final class JosdkMetrics implements Metrics {

    static final String CONTROLLER = "controller.name";

    private final Counter events;
    private final Counter started;
    private final Counter retries;
    private final Counter success;
    private final Counter failed;
    private final Counter cleanups;
    private final Gauge executing;
    private final Histogram executions;

    public JosdkMetrics(CollectorRegistry registry) {
        events = Counter.build("operator_sdk_events_received_total", "Events the controller received.")
                .labelNames("controller", "event", "action")
                .register(registry);
        started = Counter.build("operator_sdk_reconciliations_started_total", "Reconciliations started.")
                .labelNames("controller")
                .register(registry);
        retries = Counter.build("operator_sdk_reconciliations_retries_total", "Reconciliations that were retries.")
                .labelNames("controller")
                .register(registry);
        success = Counter.build("operator_sdk_reconciliations_success_total", "Reconciliations that succeeded.")
                .labelNames("controller")
                .register(registry);
        failed = Counter.build(
                        "operator_sdk_reconciliations_failed_total", "Reconciliations that failed, by exception.")
                .labelNames("controller", "exception")
                .register(registry);
        cleanups = Counter.build("operator_sdk_events_delete_total", "Resources whose cleanup finished.")
                .labelNames("controller")
                .register(registry);
        executing = Gauge.build("operator_sdk_reconciliations_executions", "Reconciliations running now.")
                .labelNames("controller")
                .register(registry);
        executions = Histogram.build(
                        "operator_sdk_controllers_execution_seconds",
                        "Time in the reconciler, by operation (reconcile or cleanup) and result.")
                .labelNames("controller", "operation", "result")
                .buckets(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120)
                .register(registry);
    }

    private static String controller(Map<String, Object> metadata) {
        Object name = metadata == null ? null : metadata.get(CONTROLLER);
        return name == null ? "unknown" : name.toString();
    }

    @Override
    public void eventReceived(Event event, Map<String, Object> metadata) {
        String action = event instanceof ResourceEvent re ? re.getAction().name() : "";
        events.labels(controller(metadata), event.getClass().getSimpleName(), action)
                .inc();
    }

    @Override
    public void reconciliationSubmitted(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
        started.labels(controller(metadata)).inc();
        if (retryInfo != null && retryInfo.getAttemptCount() > 0) {
            retries.labels(controller(metadata)).inc();
        }
    }

    @Override
    public void reconciliationFailed(
            HasMetadata resource, RetryInfo retryInfo, Exception exception, Map<String, Object> metadata) {
        Throwable cause = exception.getCause() != null ? exception.getCause() : exception;
        failed.labels(controller(metadata), cause.getClass().getSimpleName()).inc();
    }

    @Override
    public void reconciliationStarted(HasMetadata resource, Map<String, Object> metadata) {
        executing.labels(controller(metadata)).inc();
    }

    @Override
    public void reconciliationFinished(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
        executing.labels(controller(metadata)).dec();
    }

    @Override
    public void reconciliationSucceeded(HasMetadata resource, Map<String, Object> metadata) {
        success.labels(controller(metadata)).inc();
    }

    @Override
    public void cleanupDone(ResourceID resourceID, Map<String, Object> metadata) {
        cleanups.labels(controller(metadata)).inc();
    }

    @Override
    public <T> T timeControllerExecution(ControllerExecution<T> execution) throws Exception {
        long begin = System.nanoTime();
        String result = "success";
        try {
            return execution.execute();
        } catch (Exception e) {
            result = "failure";
            throw e;
        } finally {
            executions
                    .labels(execution.controllerName(), execution.name(), result)
                    .observe((System.nanoTime() - begin) / 1e9);
        }
    }

    @Override
    public void controllerRegistered(Controller<? extends HasMetadata> controller) {
        String name = controller.getConfiguration().getName();
        started.labels(name);
        success.labels(name);
        executing.labels(name);
        cleanups.labels(name);
    }
}
