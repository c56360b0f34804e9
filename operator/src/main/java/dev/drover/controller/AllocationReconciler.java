package dev.drover.controller;

import dev.drover.allocrunner.UserRestart;
import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.api.config.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import io.javaoperatorsdk.operator.api.config.ResolvedControllerConfiguration;
import io.javaoperatorsdk.operator.api.config.informer.FieldSelector;
import io.javaoperatorsdk.operator.api.config.informer.InformerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The JOSDK side, kept thin: every Allocation event becomes a call on the
 * {@link AllocationController}. Status is never written from here (the status
 * writer does that); JOSDK adds and removes the finalizer, so deleting an
 * Allocation destroys it on the node first.
 */
@io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration(
        name = AllocationReconciler.NAME,
        finalizerName = AllocationReconciler.FINALIZER)
public final class AllocationReconciler implements Reconciler<Allocation>, Cleaner<Allocation> {

    public static final String NAME = "allocations";
    public static final String FINALIZER = "drover.dev/finalizer";
    /** How soon a delete whose destroy is not done yet is looked at again. */
    static final Duration CLEANUP_AGAIN = Duration.ofSeconds(5);

    private final AllocationController controller;

    public AllocationReconciler(AllocationController controller) {
        this.controller = controller;
    }

    @Override
    public UpdateControl<Allocation> reconcile(Allocation allocation, Context<Allocation> context) throws Exception {
        controller.reconcile(allocation);
        return UpdateControl.noUpdate();
    }

    @Override
    public DeleteControl cleanup(Allocation allocation, Context<Allocation> context) throws Exception {
        if (allocation.getSpec() == null
                || !controller.node().equals(allocation.getSpec().getNodeName())) {
            // another node's now (moved while being deleted): its agent removes the finalizer once it is done
            controller.movedAway(allocation);
            return DeleteControl.noFinalizerRemoval();
        }
        if (controller.delete(allocation)) {
            return DeleteControl.defaultDelete();
        }
        // a task may still be alive: the finalizer stays, and the destroy (going on meanwhile) is looked at again
        return DeleteControl.noFinalizerRemoval().rescheduleAfter(CLEANUP_AGAIN.toMillis());
    }

    /**
     * Registers the reconciler for {@code node}'s allocations only: the watch asks
     * the API server for {@code spec.nodeName=node}, and a filter drops anything
     * else it delivers anyway (some API servers ignore field selectors), before
     * JOSDK would add a finalizer to it. Without {@code fieldSelector} (API servers before
     * Kubernetes 1.31 reject selectors on custom resource fields) only the filter works.
     *
     * <p>An allocation this agent runs whose {@code spec.nodeName} changed reaches the filter too: as an
     * update without a field selector, as a delete with one (it left the selection). Either way the filter
     * hands it to {@link AllocationController#movedAway} and keeps it from JOSDK, which would otherwise
     * run its cleanup and remove the finalizer that the new node's agent needs.
     */
    public RegisteredController<Allocation> register(Operator operator, String node, boolean fieldSelector) {
        ControllerConfiguration<Allocation> base = ControllerConfigurationOverrider.override(
                        operator.getConfigurationService().getConfigurationFor(this))
                .watchingAllNamespaces()
                .withGenericFilter(a -> isFor(a, node))
                .build();
        InformerConfiguration<Allocation>.Builder informer = InformerConfiguration.builder(base.getInformerConfig())
                .withOnUpdateFilter(AllocationReconciler::news)
                .withItemStore(new CachedAllocations(controller::knownStatus));
        if (fieldSelector) {
            informer.withFieldSelector(new FieldSelector(new FieldSelector.Field("spec.nodeName", node)));
        }
        ControllerConfiguration<Allocation> cfg = new ResolvedControllerConfiguration<>(
                base.getName(),
                false, // generation-aware by news() instead: the restart annotation does not change the generation
                base.getAssociatedReconcilerClassName(),
                base.getRetry(),
                base.getRateLimiter(),
                base.maxReconciliationInterval().orElse(null),
                base.getFinalizerName(),
                Map.of(),
                base.fieldManager(),
                base.getConfigurationService(),
                informer.buildForController(),
                base.triggerReconcilerOnAllEvents(),
                null);
        return operator.register(this, cfg);
    }

    /**
     * Whether an update is worth a reconcile: what JOSDK's generation-aware filter lets through (a newer generation,
     * a finalizer change, a delete under way), and a new {@code drover.dev/restartedAt} annotation, which leaves the
     * generation as it is. The agent's own status writes are not.
     */
    static boolean news(Allocation newer, Allocation older) {
        ObjectMeta now = newer.getMetadata();
        ObjectMeta was = older.getMetadata();
        return was.getGeneration() == null
                || now.getGeneration() == null
                || now.getGeneration() > was.getGeneration()
                || now.getDeletionTimestamp() != null
                || !Objects.equals(now.getFinalizers(), was.getFinalizers())
                || !UserRestart.valueOf(newer).equals(UserRestart.valueOf(older));
    }

    private boolean isFor(Allocation a, String node) {
        if (a.getSpec() != null && node.equals(a.getSpec().getNodeName())) {
            return true;
        }
        controller.movedAway(a); // one this agent ran that moved: destroyed here, never reconciled
        return false;
    }
}
