package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.Durations;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** values.schema.json turns a wrong value into an install-time error that names it. */
class ChartSchemaTest {

    static Stream<Arguments> badValues() {
        return Stream.of(
                Arguments.of("image.tag", 5, "/image/tag"),
                Arguments.of("agent.rawExec.enabled", "yes", "/agent/rawExec/enabled"),
                Arguments.of("image.pullPolicy", "Sometimes", "/image/pullPolicy"),
                Arguments.of("agent.metricsPort", 70000, "/agent/metricsPort"),
                Arguments.of("agent.dataDir", "var/lib/drover", "/agent/dataDir"),
                Arguments.of("agent.config.maxKillTimeout", "30 seconds", "/agent/config/maxKillTimeout"),
                Arguments.of("agent.config.gc.interval", "PT1M", "/agent/config/gc/interval"),
                Arguments.of("agent.config.gc.interval", "1s".repeat(40), "/agent/config/gc/interval"),
                Arguments.of("agent.config.gc.maxDiskUsage", 80, "/agent/config/gc/maxDiskUsage"),
                Arguments.of("agent.config.gc.intervall", "1m", "intervall"),
                Arguments.of("agent.config.events.taskEvents", "warnings", "/agent/config/events/taskEvents"),
                Arguments.of("devicePlugin.nvidia.enabled", true, "devicePlugin"),
                Arguments.of("revisionHistoryLimit", -1, "/revisionHistoryLimit"),
                Arguments.of("commonLabels.team", 5, "/commonLabels/team"),
                Arguments.of("gateway.tls.caBundle", "not a certificate", "/gateway/tls/caBundle"),
                Arguments.of(
                        "gateway.tls.certManager.issuerRef.kind", "Vault", "/gateway/tls/certManager/issuerRef/kind"),
                Arguments.of("gateway.tls.certManager.duration", "1 year", "/gateway/tls/certManager/duration"));
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void badValueFailsTheRenderNamingIt(String key, Object value, String named) {
        assertThatThrownBy(() -> DroverChart.template(ValueSet.DEFAULTS, Map.of(key, value)))
                .hasMessageContaining("values don't meet the specifications of the schema")
                .hasMessageContaining(named);
    }

    /** The chart took only whole numbers of ms, s, m and h; the agent reads every duration in the one grammar. */
    @Test
    void everyDurationTheAgentReadsPassesTheSchema() {
        assertThatCode(() -> DroverChart.template(ValueSet.DEFAULTS, Map.of("agent.config.gc.interval", "1.5h")))
                .doesNotThrowAnyException();
    }

    @Test
    void everyDurationSettingUsesTheOneGrammar() throws Exception {
        JsonNode schema = new ObjectMapper()
                .readTree(Path.of("../charts/drover/values.schema.json").toFile());
        List<JsonNode> durations = new ArrayList<>();
        // the agent's settings; the ServiceMonitor's are Prometheus durations, another grammar
        collectDurations(schema.at("/properties/agent/properties/config"), durations);
        assertThat(durations).hasSizeGreaterThanOrEqualTo(5).allSatisfy(d -> {
            assertThat(d.path("pattern").asText()).isEqualTo(Durations.PATTERN);
            assertThat(d.path("maxLength").asInt()).isEqualTo(Durations.MAX_LENGTH);
        });
    }

    private static void collectDurations(JsonNode node, List<JsonNode> out) {
        if (node.path("description").asText().startsWith("A duration")) {
            out.add(node);
        }
        node.forEach(child -> collectDurations(child, out));
    }
}
