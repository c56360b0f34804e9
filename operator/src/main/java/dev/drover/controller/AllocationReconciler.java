package dev.drover.controller;

import dev.drover.allocrunner.UserRestart;
import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.api.config.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import io.javaoperatorsdk.operator.api.config.ResolvedControllerConfiguration;
import io.javaoperatorsdk.operator.api.config.informer.FieldSelector;
import io.javaoperatorsdk.operator.api.config.informer.InformerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.Controller;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The JOSDK side, kept thin: every Allocation event becomes a call on the
 * {@link AllocationController}. Status is never written from here (the status
 * writer does that). The agent adds and removes the finalizer itself, one small
 * patch each ({@link Finalizer}), so deleting an Allocation destroys it on the
 * node first; JOSDK manages no finalizer (this is no {@code Cleaner}) and hands
 * every event to {@link #reconcile}, a delete under way included.
 */
@io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration(
        name = AllocationReconciler.NAME,
        triggerReconcilerOnAllEvents = true)
public final class AllocationReconciler implements Reconciler<Allocation> {

    public static final String NAME = "allocations";
    public static final String FINALIZER = Finalizer.NAME;
    /**
     * Allocations reconciled at once: JOSDK's default. Fewer had fewer requests in flight and less promoted at each
     * young collection (at 1 000 allocations created and deleted, 16 gave a peak RSS of 185.0 and 185.3 MiB against
     * 187.1 and 192.6 with 50), but under a {@code resize} node reservation an admission waits in its reconcile for
     * the kubelet, and the admissions waiting together are booked in one resize: with 16, a burst of 200 cost 27
     * resizes instead of a handful.
     */
    public static final int AT_ONCE = 50;
    /**
     * How soon a delete whose destroy is not done yet is looked at again. The destroy goes on meanwhile; each look
     * waits for it a second at most, so tasks slow to die hold no reconciler thread.
     */
    static final Duration CLEANUP_AGAIN = Duration.ofSeconds(1);

    private final AllocationController controller;
    private final Finalizer finalizer;

    /** The agent's: its finalizer written to {@code client}'s API server. */
    public AllocationReconciler(AllocationController controller, KubernetesClient client) {
        this(controller, Finalizer.of(client));
    }

    public AllocationReconciler(AllocationController controller, Finalizer finalizer) {
        this.controller = controller;
        this.finalizer = finalizer;
    }

    @Override
    public UpdateControl<Allocation> reconcile(Allocation allocation, Context<Allocation> context) throws Exception {
        if (context.isPrimaryResourceDeleted()) {
            // gone: its destroy ran while it was being deleted (or someone cleared the finalizer; the sweep at the
            // agent's next start destroys what is left, as before)
            return UpdateControl.noUpdate();
        }
        if (allocation.getMetadata().getDeletionTimestamp() != null) {
            return deleting(allocation);
        }
        // before anything runs: a delete while the agent is down must wait for it
        if (finalizer.add(allocation)) {
            controller.reconcile(allocation);
        }
        return UpdateControl.noUpdate();
    }

    /** An allocation being deleted: destroyed here, then its finalizer removed; or looked at again. */
    UpdateControl<Allocation> deleting(Allocation allocation) throws InterruptedException {
        if (!Finalizer.has(allocation)) {
            return UpdateControl.noUpdate(); // not ours to hold (or already released): nothing to do, as before
        }
        if (allocation.getSpec() == null
                || !controller.node().equals(allocation.getSpec().getNodeName())) {
            // another node's now (moved while being deleted): its agent removes the finalizer once it is done
            controller.movedAway(allocation);
            return UpdateControl.noUpdate();
        }
        if (controller.delete(allocation) && finalizer.remove(allocation)) {
            return UpdateControl.noUpdate();
        }
        // a task may still be alive (or the finalizer changed under its removal twice): the finalizer stays, and the
        // destroy (going on meanwhile) is looked at again
        return UpdateControl.<Allocation>noUpdate().rescheduleAfter(CLEANUP_AGAIN);
    }

    /**
     * Registers the reconciler for {@code node}'s allocations only: the watch asks
     * the API server for {@code spec.nodeName=node}, and a filter drops anything
     * else it delivers anyway (some API servers ignore field selectors), before
     * the agent would add its finalizer to it. Without {@code fieldSelector} (API servers before
     * Kubernetes 1.31 reject selectors on custom resource fields) only the filter works.
     *
     * <p>An allocation this agent runs whose {@code spec.nodeName} changed reaches the filter too: as an
     * update without a field selector, as a delete with one (it left the selection). Either way the filter
     * hands it to {@link AllocationController#movedAway} and keeps it from {@link #reconcile}, which would
     * otherwise destroy it and remove the finalizer that the new node's agent needs.
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
                null, // no finalizer of JOSDK's: the agent's own is added and removed by Finalizer
                Map.of(),
                base.fieldManager(),
                base.getConfigurationService(),
                informer.buildForController(),
                true, // every event to reconcile, a delete under way included: no Cleaner, no finalizer of JOSDK's
                null);
        return operator.register(this, cfg);
    }

    /**
     * This node's allocations in the informer's cache of a {@link #register}ed reconciler, once its operator started
     * (the informer's list read, and the watch's changes since): what the API server has, without a second list.
     */
    public static List<Allocation> cached(RegisteredController<Allocation> registered, String node) {
        if (!(registered instanceof Controller<Allocation> c)) {
            throw new IllegalStateException(
                    "the registered controller keeps no informer cache of its own: " + registered);
        }
        return c.getEventSourceManager()
                .getControllerEventSource()
                .list(a -> a.getSpec() != null && node.equals(a.getSpec().getNodeName()))
                .toList();
    }

    /**
     * Whether an update is worth a reconcile: a newer generation, a delete under way, a finalizer change other than
     * the agent adding its own (the reconcile that added it has run), and a new {@code drover.dev/restartedAt}
     * annotation, which leaves the generation as it is. The agent's own status writes are not.
     */
    static boolean news(Allocation newer, Allocation older) {
        ObjectMeta now = newer.getMetadata();
        ObjectMeta was = older.getMetadata();
        return was.getGeneration() == null
                || now.getGeneration() == null
                || now.getGeneration() > was.getGeneration()
                || now.getDeletionTimestamp() != null
                || !Objects.equals(now.getFinalizers(), withOurs(was.getFinalizers()))
                        && !Objects.equals(now.getFinalizers(), was.getFinalizers())
                || !UserRestart.valueOf(newer).equals(UserRestart.valueOf(older));
    }

    /** {@code finalizers} with the agent's appended, as its own add leaves them. */
    private static List<String> withOurs(List<String> finalizers) {
        if (finalizers == null || finalizers.isEmpty()) {
            return List.of(FINALIZER);
        }
        if (finalizers.contains(FINALIZER)) {
            return finalizers;
        }
        List<String> with = new ArrayList<>(finalizers);
        with.add(FINALIZER);
        return with;
    }

    private boolean isFor(Allocation a, String node) {
        if (a.getSpec() != null && node.equals(a.getSpec().getNodeName())) {
            return true;
        }
        controller.movedAway(a); // one this agent ran that moved: destroyed here, never reconciled
        return false;
    }
}
