package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingAdmissionPolicySpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The chart's MutatingAdmissionPolicy that puts Drover's finalizer on each Allocation at create: rendered for
 * Kubernetes 1.36, where the API is GA, and for no older cluster.
 */
class ChartAllocationFinalizerTest {

    static boolean allocationFinalizer(HasMetadata o) {
        return "allocation-finalizer".equals(o.getMetadata().getLabels().get("app.kubernetes.io/component"));
    }

    @Test
    void onKubernetes136ThePolicyAndItsBindingAddTheFinalizerOnCreateOnly() {
        List<HasMetadata> objects = DroverChart.parse(DroverChart.template("1.36.0", Map.of())).stream()
                .filter(ChartAllocationFinalizerTest::allocationFinalizer)
                .toList();

        assertThat(objects)
                .extracting(o -> o.getApiVersion() + " " + o.getKind() + " "
                        + o.getMetadata().getName())
                .containsExactly(
                        "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy drover-allocation-finalizer",
                        "admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding drover-allocation-finalizer");
        MutatingAdmissionPolicySpec policy = ((MutatingAdmissionPolicy) objects.getFirst()).getSpec();
        assertThat(policy.getMatchConstraints().getResourceRules().getFirst().getOperations())
                .containsExactly("CREATE");
        assertThat(policy.getMatchConditions().getFirst().getExpression())
                .contains("'drover.dev/finalizer' in object.metadata.finalizers");
        assertThat(policy.getMutations().getFirst().getPatchType()).isEqualTo("JSONPatch");
        assertThat(policy.getMutations().getFirst().getJsonPatch().getExpression())
                .contains("JSONPatch{op: \"add\", path: \"/metadata/finalizers/-\"");
        assertThat(policy.getFailurePolicy())
                .as("the agent adds it where the policy could not")
                .isEqualTo("Ignore");
    }

    @Test
    void notRenderedBefore136() {
        assertThat(DroverChart.parse(DroverChart.template("1.35.0", Map.of())))
                .as("MutatingAdmissionPolicy v1 is GA from 1.36")
                .noneMatch(ChartAllocationFinalizerTest::allocationFinalizer);
        assertThat(DroverChart.render(ValueSet.DEFAULTS).objects())
                .noneMatch(ChartAllocationFinalizerTest::allocationFinalizer);
    }
}
