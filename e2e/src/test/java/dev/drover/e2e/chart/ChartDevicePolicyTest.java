package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The chart's exclusive-devices policies: Pods and every workload's pod template that ask the kubelet for one of
 * Drover's devices ({@code drover.dev/...}) are refused, for every user, from Kubernetes 1.30; turned off, or on an
 * older cluster, they are left out without failing the render.
 */
class ChartDevicePolicyTest {

    static List<ValidatingAdmissionPolicy> policies(Rendered rendered) {
        return rendered.objects().stream()
                .filter(ValidatingAdmissionPolicy.class::isInstance)
                .map(ValidatingAdmissionPolicy.class::cast)
                .filter(ChartDevicePolicyTest::exclusiveDevices)
                .toList();
    }

    static boolean exclusiveDevices(HasMetadata o) {
        return "exclusive-devices".equals(o.getMetadata().getLabels().get("app.kubernetes.io/component"));
    }

    @Test
    void podsAndEveryWorkloadsPodTemplateAreCheckedForEveryUserOnCreateAndUpdate() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS);
        List<ValidatingAdmissionPolicy> policies = policies(rendered);
        assertThat(policies)
                .extracting(p -> p.getMetadata().getName())
                .containsExactly("drover-devices-pods", "drover-devices-workloads", "drover-devices-cronjobs");
        assertThat(policies)
                .extracting(p -> p.getSpec().getMatchConstraints().getResourceRules().stream()
                        .map(r -> r.getApiGroups() + "" + r.getResources())
                        .toList())
                .containsExactly(
                        List.of("[][pods]"),
                        List.of(
                                "[apps][deployments, daemonsets, statefulsets, replicasets]",
                                "[batch][jobs]",
                                "[][replicationcontrollers]"),
                        List.of("[batch][cronjobs]"));
        for (ValidatingAdmissionPolicy policy : policies) {
            assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
            assertThat(policy.getSpec().getMatchConstraints().getResourceRules())
                    .allSatisfy(r -> assertThat(r.getOperations()).containsExactly("CREATE", "UPDATE"));
            assertThat(policy.getSpec().getMatchConditions())
                    .as("no user is left out: only updates that leave the pod spec alone are")
                    .singleElement()
                    .satisfies(c -> assertThat(c.getExpression()).startsWith("request.operation == 'CREATE' || "));
            assertThat(policy.getSpec().getVariables())
                    .extracting(v -> v.getName())
                    .containsExactly("spec", "asked");
            assertThat(policy.getSpec().getVariables().get(1).getExpression())
                    .contains(
                            "variables.spec.containers",
                            "variables.spec.initContainers",
                            "variables.spec.ephemeralContainers",
                            "variables.spec.resources.requests",
                            "variables.spec.resources.limits",
                            "r.startsWith('drover.dev/')");
            assertThat(policy.getSpec().getValidations()).singleElement().satisfies(v -> {
                assertThat(v.getExpression()).isEqualTo("size(variables.asked) == 0");
                assertThat(v.getReason()).isEqualTo("Forbidden");
                assertThat(v.getMessage()).contains("not by the kubelet to Pods");
            });
        }
        assertThat(policies)
                .extracting(p -> p.getSpec().getVariables().getFirst().getExpression())
                .containsExactly(
                        "object.spec", "object.spec.template.spec", "object.spec.jobTemplate.spec.template.spec");
        assertThat(rendered.objects().stream()
                        .filter(ValidatingAdmissionPolicyBinding.class::isInstance)
                        .map(ValidatingAdmissionPolicyBinding.class::cast)
                        .filter(ChartDevicePolicyTest::exclusiveDevices))
                .allSatisfy(b -> {
                    assertThat(b.getSpec().getValidationActions()).containsExactly("Deny");
                    assertThat(b.getSpec().getMatchResources())
                            .as("every namespace")
                            .isNull();
                })
                .extracting(b -> b.getSpec().getPolicyName())
                .containsExactlyElementsOf(
                        policies.stream().map(p -> p.getMetadata().getName()).toList());
    }

    @Test
    void leftOutWhenTurnedOffOrBefore130() {
        assertThat(DroverChart.render(ValueSet.DEFAULTS, Map.of("exclusiveDevices.enabled", false))
                        .objects())
                .noneMatch(ChartDevicePolicyTest::exclusiveDevices);
        String old = DroverChart.template(
                "1.29.0", Map.of("agent.config.fieldSelector", false, "nodeConfinement.enabled", false));
        assertThat(DroverChart.parse(old))
                .as("before 1.30 there is no ValidatingAdmissionPolicy v1 to render")
                .noneMatch(ChartDevicePolicyTest::exclusiveDevices);
    }
}
