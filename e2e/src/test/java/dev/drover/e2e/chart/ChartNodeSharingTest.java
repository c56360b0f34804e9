package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code agent.nodeSharing}: the chart renders the mode the cluster's version allows unless told, the rights that
 * mode needs and no others, and for resize the {@code reservation} container and the policy that keeps an agent to it.
 */
class ChartNodeSharingTest {

    private static Rendered render(String kubeVersion, Map<String, Object> sets) {
        return new Rendered(DroverChart.parse(DroverChart.template(kubeVersion, sets)));
    }

    private static List<String> podRules(Rendered r) {
        return r.one(ClusterRole.class).getRules().stream()
                .filter(rule -> rule.getResources().stream().anyMatch(res -> res.startsWith("pods")))
                .map(ChartNodeSharingTest::text)
                .toList();
    }

    private static String text(PolicyRule rule) {
        return rule.getResources() + " " + rule.getVerbs();
    }

    private static String mode(Rendered r) {
        return r.configMap("drover")
                .orElseThrow()
                .getData()
                .get("agent.yaml")
                .lines()
                .filter(l -> l.startsWith("nodeSharing:"))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void onKubernetes135TheAgentBooksOnItsReservationContainerWithGetAndResizeOnly() {
        Rendered r = render("1.35.0", Map.of());

        assertThat(mode(r)).isEqualTo("nodeSharing: resize");
        assertThat(podRules(r)).containsExactlyInAnyOrder("[pods] [get]", "[pods/resize] [patch]");
        List<Container> containers =
                r.daemonSet().getSpec().getTemplate().getSpec().getContainers();
        assertThat(containers).extracting(Container::getName).containsExactly("agent", "reservation");
        Container reservation = containers.get(1);
        assertThat(reservation.getImage()).isEqualTo("registry.k8s.io/pause:3.10");
        assertThat(reservation.getResources().getRequests())
                .as("nothing booked until the agent admits something")
                .isEqualTo(Map.of("cpu", new Quantity("0"), "memory", new Quantity("0")));
        assertThat(reservation.getResources().getLimits()).isNullOrEmpty();
        assertThat(reservation.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(reservation.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(reservation.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(containers.get(0).getEnv()).extracting(EnvVar::getName).contains("POD_NAME", "POD_NAMESPACE");

        ValidatingAdmissionPolicy resize = r.all(ValidatingAdmissionPolicy.class).stream()
                .filter(p -> p.getMetadata().getName().equals("drover-agent-pod-resize"))
                .findFirst()
                .orElseThrow();
        assertThat(resize.getSpec()
                        .getMatchConstraints()
                        .getResourceRules()
                        .getFirst()
                        .getResources())
                .containsExactly("pods/resize");
        assertThat(resize.getSpec().getValidations())
                .anySatisfy(v -> assertThat(v.getExpression()).contains("request.name == variables.podName"))
                .anySatisfy(v -> assertThat(v.getExpression()).contains("c.name == 'reservation'"));
    }

    @Test
    void beforeKubernetes135TheAgentCountsItsNodesPodsWithListAndWatchAndHasNoReservation() {
        Rendered r = render("1.32.0", Map.of());

        assertThat(mode(r)).isEqualTo("nodeSharing: dedicated");
        assertThat(podRules(r)).containsExactly("[pods] [list, watch]");
        assertThat(r.daemonSet().getSpec().getTemplate().getSpec().getContainers())
                .extracting(Container::getName)
                .containsExactly("agent");
        assertThat(r.all(ValidatingAdmissionPolicy.class))
                .noneMatch(p -> p.getMetadata().getName().endsWith("pod-resize"));
    }

    @Test
    void anOperatorMayChooseEitherModeWhateverTheVersion() {
        assertThat(mode(render("1.35.0", Map.of("agent.nodeSharing", "dedicated"))))
                .isEqualTo("nodeSharing: dedicated");
        Rendered resize = render("1.33.0", Map.of("agent.nodeSharing", "resize"));
        assertThat(mode(resize)).isEqualTo("nodeSharing: resize");
        assertThat(podRules(resize)).containsExactlyInAnyOrder("[pods] [get]", "[pods/resize] [patch]");
    }
}
