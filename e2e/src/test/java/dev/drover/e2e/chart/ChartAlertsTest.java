package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The chart's PrometheusRule (its alerts and their runbooks), PodMonitor, and the monitors' relabelings. */
class ChartAlertsTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final List<String> ALERTS = List.of(
            "DroverAgentDown",
            "DroverAgentNotReady",
            "DroverAllocationsFailing",
            "DroverTaskRestartStorm",
            "DroverStateStoreErrors",
            "DroverStatusWritesFailing",
            "DroverGpuUnhealthy",
            "DroverStartSlotWait");

    static JsonNode spec(GenericKubernetesResource r) {
        return YAML.valueToTree(r.getAdditionalProperties().get("spec"));
    }

    static JsonNode ruleSpec(Map<String, Object> sets) {
        Map<String, Object> all = new LinkedHashMap<>(sets);
        all.put("metrics.prometheusRule.enabled", true);
        return spec(DroverChart.render(ValueSet.DEFAULTS, all)
                .generic("PrometheusRule")
                .orElseThrow());
    }

    static Map<String, JsonNode> alerts(JsonNode spec) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        spec.at("/groups")
                .forEach(g ->
                        g.path("rules").forEach(r -> out.put(r.path("alert").asText(), r)));
        return out;
    }

    @Test
    void alertsAndPodMonitorAreOffByDefault() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS);
        assertThat(rendered.generic("PrometheusRule")).isEmpty();
        assertThat(rendered.generic("PodMonitor")).isEmpty();
    }

    @Test
    void everyAlertHasASeverityADurationAndARunbookSectionInOperationsMd() throws IOException {
        Map<String, JsonNode> alerts = alerts(ruleSpec(Map.of()));
        assertThat(alerts.keySet()).containsExactlyElementsOf(ALERTS);
        List<String> anchors = anchors(Files.readString(Path.of("..", "docs", "operations.md")));
        for (JsonNode alert : alerts.values()) {
            String name = alert.path("alert").asText();
            assertThat(alert.path("expr").asText()).as(name).contains("job=\"drover-metrics\"");
            assertThat(alert.path("for").asText()).as(name).matches("\\d+m");
            assertThat(alert.at("/labels/severity").asText()).as(name).isIn("critical", "warning");
            assertThat(alert.at("/annotations/summary").asText()).as(name).isNotBlank();
            String runbook = alert.at("/annotations/runbook").asText();
            assertThat(runbook).as(name).isEqualTo("docs/operations.md#" + name.toLowerCase(Locale.ROOT));
            assertThat(anchors)
                    .as("docs/operations.md has a heading for %s's runbook", name)
                    .contains(runbook.substring(runbook.indexOf('#') + 1));
        }
    }

    @Test
    void valuesSetThresholdsDurationsSeveritiesLabelsAndRunbookLinks() {
        Map<String, JsonNode> alerts = alerts(ruleSpec(Map.of(
                "metrics.prometheusRule.rules.taskRestartStorm.threshold", 3,
                "metrics.prometheusRule.rules.taskRestartStorm.for", "20m",
                "metrics.prometheusRule.rules.taskRestartStorm.severity", "critical",
                "metrics.prometheusRule.rules.gpuUnhealthy.enabled", false,
                "metrics.prometheusRule.additionalLabels.team", "platform",
                "metrics.prometheusRule.agentSelector", "job=\"kubernetes-pods\",app=\"drover\"",
                "metrics.prometheusRule.runbookBaseUrl", "https://wiki.example.com/drover/operations")));
        assertThat(alerts).doesNotContainKey("DroverGpuUnhealthy").hasSize(ALERTS.size() - 1);
        JsonNode storm = alerts.get("DroverTaskRestartStorm");
        assertThat(storm.path("expr").asText())
                .isEqualTo("rate(drover_task_restarts_total{job=\"kubernetes-pods\",app=\"drover\"}[5m]) * 60 > 3");
        assertThat(storm.path("for").asText()).isEqualTo("20m");
        assertThat(storm.at("/labels/severity").asText()).isEqualTo("critical");
        for (JsonNode alert : alerts.values()) {
            assertThat(alert.at("/labels/team").asText()).isEqualTo("platform");
            assertThat(alert.at("/annotations/runbook_url").asText())
                    .isEqualTo("https://wiki.example.com/drover/operations#"
                            + alert.path("alert").asText().toLowerCase(Locale.ROOT));
            assertThat(alert.at("/annotations/runbook").isMissingNode()).isTrue();
        }
    }

    @Test
    void promtoolChecksTheRulesAndTheirUnitTestsPass(@TempDir Path dir) throws Exception {
        Optional<Promtool> promtool = Promtool.find();
        assumeTrue(promtool.isPresent(), Promtool.HOW);
        GenericKubernetesResource rule = DroverChart.render(
                        ValueSet.DEFAULTS, Map.of("metrics.prometheusRule.enabled", true))
                .generic("PrometheusRule")
                .orElseThrow();
        // a PrometheusRule's spec is a Prometheus rule file
        YAML.writeValue(
                dir.resolve("rules.yaml").toFile(),
                rule.getAdditionalProperties().get("spec"));
        Files.copy(Path.of("src", "test", "resources", "alerts", "alerts_test.yaml"), dir.resolve("alerts_test.yaml"));

        Promtool.Result check = promtool.get().run(dir, "check", "rules", "rules.yaml");
        assertThat(check.exitCode())
                .as("promtool check rules:%n%s", check.output())
                .isZero();
        assertThat(check.output()).contains("SUCCESS: " + ALERTS.size() + " rules found");

        Promtool.Result test = promtool.get().run(dir, "test", "rules", "alerts_test.yaml");
        assertThat(test.exitCode())
                .as("promtool test rules:%n%s", test.output())
                .isZero();
    }

    @Test
    void theUnitTestsCoverEveryAlert() throws IOException {
        String tests = Files.readString(Path.of("src", "test", "resources", "alerts", "alerts_test.yaml"));
        for (String alert : ALERTS) {
            assertThat(tests).as("alerts_test.yaml fires %s", alert).contains("alertname: " + alert + "\n");
        }
    }

    @Test
    void podMonitorScrapesThePodsAsTheServiceMonitorsJobWithTheUsersRelabelingsAfter() {
        Rendered rendered = DroverChart.render(
                ValueSet.DEFAULTS,
                Map.of(
                        "metrics.podMonitor.enabled", true,
                        "metrics.podMonitor.labels.release", "prometheus",
                        "metrics.podMonitor.relabelings[0].targetLabel", "cluster",
                        "metrics.podMonitor.relabelings[0].replacement", "eu-1",
                        "metrics.podMonitor.metricRelabelings[0].action", "drop",
                        "metrics.podMonitor.metricRelabelings[0].regex", "jvm_.*",
                        "metrics.podMonitor.metricRelabelings[0].sourceLabels[0]", "__name__"));
        assertThat(rendered.generic("ServiceMonitor")).isEmpty();
        GenericKubernetesResource monitor = rendered.generic("PodMonitor").orElseThrow();
        assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "prometheus");
        JsonNode spec = spec(monitor);
        Map<String, String> selector = YAML.convertValue(
                spec.at("/selector/matchLabels"),
                YAML.getTypeFactory().constructMapType(Map.class, String.class, String.class));
        assertThat(rendered.daemonSet().getSpec().getTemplate().getMetadata().getLabels())
                .containsAllEntriesOf(selector);
        assertThat(selector).containsEntry("app.kubernetes.io/component", "agent");
        JsonNode endpoint = spec.at("/podMetricsEndpoints/0");
        assertThat(endpoint.at("/port").asText()).isEqualTo("metrics");
        List<String> targets = new ArrayList<>();
        endpoint.at("/relabelings")
                .forEach(r -> targets.add(r.path("targetLabel").asText()));
        assertThat(targets).containsExactly("node", "job", "cluster");
        assertThat(endpoint.at("/relabelings/1/replacement").asText())
                .as("the job the alerts select by default")
                .isEqualTo("drover-metrics");
        assertThat(endpoint.at("/metricRelabelings/0/action").asText()).isEqualTo("drop");
    }

    @Test
    void serviceMonitorTakesRelabelingsAfterItsOwn() {
        JsonNode endpoint = spec(DroverChart.render(
                                ValueSet.DEFAULTS,
                                Map.of(
                                        "metrics.serviceMonitor.enabled", true,
                                        "metrics.serviceMonitor.relabelings[0].targetLabel", "cluster",
                                        "metrics.serviceMonitor.relabelings[0].replacement", "eu-1",
                                        "metrics.serviceMonitor.metricRelabelings[0].action", "labeldrop",
                                        "metrics.serviceMonitor.metricRelabelings[0].regex", "pod"))
                        .generic("ServiceMonitor")
                        .orElseThrow())
                .at("/endpoints/0");
        assertThat(endpoint.at("/relabelings/0/targetLabel").asText()).isEqualTo("node");
        assertThat(endpoint.at("/relabelings/1/targetLabel").asText()).isEqualTo("cluster");
        assertThat(endpoint.at("/metricRelabelings/0/action").asText()).isEqualTo("labeldrop");
    }

    @Test
    void bothMonitorsAtOnceAreRefusedWithTheFix() {
        assertThatThrownBy(() -> DroverChart.render(
                        ValueSet.DEFAULTS,
                        Map.of("metrics.serviceMonitor.enabled", true, "metrics.podMonitor.enabled", true)))
                .hasMessageContaining("enable one of them");
    }

    /** The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped, spaces as dashes. */
    static List<String> anchors(String markdown) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^#{1,6}\\s+(.+?)\\s*$").matcher(markdown);
        while (m.find()) {
            out.add(m.group(1)
                    .toLowerCase(Locale.ROOT)
                    .replaceAll("[^a-z0-9 _-]", "")
                    .replace(' ', '-'));
        }
        return out;
    }
}
