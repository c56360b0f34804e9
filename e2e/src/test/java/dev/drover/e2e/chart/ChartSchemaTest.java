package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.stream.Stream;
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
                Arguments.of("agent.config.gc.maxDiskUsage", 80, "/agent/config/gc/maxDiskUsage"),
                Arguments.of("agent.config.gc.intervall", "1m", "intervall"),
                Arguments.of("devicePlugin.nvidia.enabled", true, "devicePlugin"));
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badValues")
    void badValueFailsTheRenderNamingIt(String key, Object value, String named) {
        assertThatThrownBy(() -> DroverChart.template(ValueSet.DEFAULTS, Map.of(key, value)))
                .hasMessageContaining("values don't meet the specifications of the schema")
                .hasMessageContaining(named);
    }
}
