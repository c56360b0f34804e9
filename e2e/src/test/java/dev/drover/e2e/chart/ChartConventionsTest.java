package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** What charts are expected to offer: digests, extra volumes, history limits, common labels, a namespace. */
class ChartConventionsTest {

    @Test
    void aDigestPinsEveryContainersImageInsteadOfTheTag() {
        Rendered rendered = DroverChart.render(
                ValueSet.DEFAULTS, Map.of("image.digest", "sha256:0123abcd", "image.tag", "ignored"));
        List<String> images = Stream.concat(
                        containers(rendered.pod()), containers(podOf(rendered.gateway(Deployment.class))))
                .map(Container::getImage)
                .toList();
        assertThat(images).isNotEmpty().allMatch("ghcr.io/drover-dev/drover-agent@sha256:0123abcd"::equals);
        assertThat(DroverChart.render(ValueSet.DEFAULTS).agent().getImage())
                .isEqualTo("ghcr.io/drover-dev/drover-agent:0.1.0");
        assertThatThrownBy(() -> DroverChart.template(ValueSet.DEFAULTS, Map.of("image.digest", "latest")))
                .hasMessageContaining("/image/digest");
    }

    @Test
    void extraVolumesAreAddedToTheAgentAndTheGateway() {
        Rendered rendered = DroverChart.render(
                ValueSet.DEFAULTS,
                Map.of(
                        "extraVolumes[0].name", "certs",
                        "extraVolumes[0].configMap.name", "corp-ca",
                        "extraVolumeMounts[0].name", "certs",
                        "extraVolumeMounts[0].mountPath", "/etc/corp-ca",
                        "gateway.extraVolumes[0].name", "g",
                        "gateway.extraVolumes[0].emptyDir.medium", "Memory",
                        "gateway.extraVolumeMounts[0].name", "g",
                        "gateway.extraVolumeMounts[0].mountPath", "/g"));
        assertThat(rendered.pod().getVolumes())
                .filteredOn(v -> "certs".equals(v.getName()))
                .singleElement()
                .satisfies(v -> assertThat(v.getConfigMap().getName()).isEqualTo("corp-ca"));
        assertThat(rendered.agent().getVolumeMounts()).anySatisfy(m -> {
            assertThat(m.getName()).isEqualTo("certs");
            assertThat(m.getMountPath()).isEqualTo("/etc/corp-ca");
        });
        PodSpec gateway = podOf(rendered.gateway(Deployment.class));
        assertThat(gateway.getVolumes()).anySatisfy(v -> assertThat(v.getName()).isEqualTo("g"));
        assertThat(gateway.getContainers().getFirst().getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/g"));
        assertThat(rendered.pod().getVolumes()).noneMatch(v -> "g".equals(v.getName()));
    }

    @Test
    void theDaemonSetAndTheGatewayKeepTheirRevisionHistoryLimit() {
        Rendered defaults = DroverChart.render(ValueSet.DEFAULTS);
        assertThat(defaults.one(DaemonSet.class).getSpec().getRevisionHistoryLimit())
                .isEqualTo(10);
        assertThat(defaults.gateway(Deployment.class).getSpec().getRevisionHistoryLimit())
                .isEqualTo(10);
        Rendered set = DroverChart.render(
                ValueSet.DEFAULTS, Map.of("revisionHistoryLimit", 3, "gateway.revisionHistoryLimit", 2));
        assertThat(set.one(DaemonSet.class).getSpec().getRevisionHistoryLimit()).isEqualTo(3);
        assertThat(set.gateway(Deployment.class).getSpec().getRevisionHistoryLimit())
                .isEqualTo(2);
    }

    @Test
    void commonLabelsAreOnEveryObjectAndPodButNoSelector() {
        for (ValueSet values : ValueSet.values()) {
            Rendered rendered = DroverChart.render(values, Map.of("commonLabels.team", "platform"));
            assertThat(rendered.objects())
                    .as("%s", values)
                    .hasSizeGreaterThan(10)
                    .allSatisfy(o -> assertThat(o.getMetadata().getLabels())
                            .as("%s/%s", o.getKind(), o.getMetadata().getName())
                            .containsEntry("team", "platform"));
            DaemonSet agents = rendered.one(DaemonSet.class);
            assertThat(agents.getSpec().getTemplate().getMetadata().getLabels()).containsEntry("team", "platform");
            assertThat(agents.getSpec().getSelector().getMatchLabels()).doesNotContainKey("team");
        }
    }

    @Test
    void namespaceOverrideMovesEveryNamespacedObjectAndWhatNamesIt() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS, Map.of("namespaceOverride", "drover-agents"));
        List<HasMetadata> namespaced = rendered.objects().stream()
                .filter(o -> o.getMetadata().getNamespace() != null)
                .toList();
        assertThat(namespaced).hasSizeGreaterThan(8);
        assertThat(namespaced)
                .filteredOn(o -> !"kube-system".equals(o.getMetadata().getNamespace()))
                .allSatisfy(o -> assertThat(o.getMetadata().getNamespace())
                        .as("%s/%s", o.getKind(), o.getMetadata().getName())
                        .isEqualTo("drover-agents"));
        assertThat(rendered.one(ClusterRoleBinding.class).getSubjects())
                .allSatisfy(s -> assertThat(s.getNamespace()).isEqualTo("drover-agents"));
        assertThat(rendered.env())
                .containsEntry("DROVER_GATEWAY_USER", "system:serviceaccount:drover-agents:drover-gateway");
        Map<String, String> tlsNames = rendered.gateway(io.fabric8.kubernetes.api.model.Secret.class)
                .getMetadata()
                .getAnnotations();
        assertThat(tlsNames.get("drover.dev/tls-names")).startsWith("drover-gateway.drover-agents.svc,");
    }

    @Test
    void scrapedLabelsDoNotOverrideTargetLabelsByDefault() {
        for (String monitor : List.of("serviceMonitor", "podMonitor")) {
            Rendered rendered = DroverChart.render(ValueSet.DEFAULTS, Map.of("metrics." + monitor + ".enabled", true));
            String kind = Character.toUpperCase(monitor.charAt(0)) + monitor.substring(1);
            var endpoints = rendered.generic(kind).orElseThrow().getAdditionalProperties();
            @SuppressWarnings("unchecked")
            Map<String, Object> spec = (Map<String, Object>) endpoints.get("spec");
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> list = (List<Map<String, Object>>)
                    spec.get("serviceMonitor".equals(monitor) ? "endpoints" : "podMetricsEndpoints");
            assertThat(list).isNotEmpty().allSatisfy(e -> assertThat(e).containsEntry("honorLabels", false));
        }
    }

    @Test
    void aClusterBefore131IsRefusedWhileTheAgentsWouldWatchByAFieldSelectorTheyCannotUse() {
        assertThatThrownBy(() -> DroverChart.template("1.30.0", Map.of()))
                .hasMessageContaining("agent.config.fieldSelector is true, and Kubernetes v1.30.0 cannot select"
                        + " custom resources by field before 1.31")
                .hasMessageContaining(
                        "set agent.config.fieldSelector=false, or agent.customResourceFieldSelectors=true");
        assertThatCode(() -> DroverChart.template("1.30.0", Map.of("agent.customResourceFieldSelectors", true)))
                .as("the 1.30 feature gate said to be on")
                .doesNotThrowAnyException();
        assertThatCode(() -> DroverChart.template("1.30.0", Map.of("agent.config.fieldSelector", false)))
                .doesNotThrowAnyException();
        assertThatCode(() -> DroverChart.template("1.31.0", Map.of())).doesNotThrowAnyException();
    }

    @Test
    void chartYamlSaysWhereTheProjectAndItsIconAre() throws Exception {
        JsonNode chart = new ObjectMapper(new YAMLFactory())
                .readTree(DroverChart.DIR.resolve("Chart.yaml").toFile());
        assertThat(chart.path("home").asText()).isEqualTo("https://github.com/drover-dev/drover");
        assertThat(chart.path("sources").get(0).asText()).isEqualTo("https://github.com/drover-dev/drover");
        String icon = chart.path("icon").asText();
        assertThat(icon).startsWith("https://raw.githubusercontent.com/drover-dev/drover/main/");
        String inRepo = icon.substring("https://raw.githubusercontent.com/drover-dev/drover/main/".length());
        assertThat(Files.readString(DroverChart.DIR.resolve("..", "..").resolve(inRepo)))
                .as("the icon is in the repository where the URL points")
                .contains("<svg");
    }

    private static Stream<Container> containers(PodSpec pod) {
        return Stream.concat(
                pod.getContainers().stream(),
                pod.getInitContainers() == null ? Stream.empty() : pod.getInitContainers().stream());
    }

    private static PodSpec podOf(Deployment deployment) {
        return deployment.getSpec().getTemplate().getSpec();
    }
}
