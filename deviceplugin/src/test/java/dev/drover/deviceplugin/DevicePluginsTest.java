package dev.drover.deviceplugin;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DevicePluginsTest {

    @Test
    void serviceLoaderFindsPluginsByName() {
        DevicePlugins plugins = DevicePlugins.discover();
        assertThat(plugins.names()).contains("fake", "nvidia");
        assertThat(plugins.factory("fake")).get().extracting(DevicePluginFactory::name).isEqualTo("fake");
    }

    @Test
    void specNamesPluginAndArgument() {
        DevicePlugins.Selection s = DevicePlugins.discover().select("fake:examples/devices/fake-gpus.yaml");
        assertThat(s.factory().name()).isEqualTo("fake");
        assertThat(s.config()).isEqualTo(Map.of("file", "examples/devices/fake-gpus.yaml"));
        assertThat(DevicePlugins.discover().select("nvidia").config()).isEmpty();
    }

    @Test
    void unknownPluginNameListsTheKnownOnes() {
        assertThatThrownBy(() -> DevicePlugins.discover().select("amd:x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no device plugin named 'amd'")
                .hasMessageContaining("fake")
                .hasMessageContaining("nvidia");
    }

    @Test
    void startConfiguresAndFailsWithTheConfigError() {
        DevicePlugins.Selection s = DevicePlugins.discover().select("fake");
        assertThatThrownBy(s::start).isInstanceOf(DevicePluginException.class)
                .hasMessageContaining("'file' is missing");
    }

    @Test
    void durationsReadAsPeopleWriteThem() {
        assertThat(DurationText.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(DurationText.parse("1m30s")).isEqualTo(Duration.ofSeconds(90));
        assertThat(DurationText.parse("2h")).isEqualTo(Duration.ofHours(2));
        assertThat(DurationText.parse("PT10S")).isEqualTo(Duration.ofSeconds(10));
        assertThatThrownBy(() -> DurationText.parse("10")).hasMessageContaining("'10' is not a duration");
        assertThatThrownBy(() -> DurationText.parse("10 sec")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void unknownConfigKeyIsAnErrorNotADefault() {
        ConfigReader r = new ConfigReader("nvidia", Map.of("quietPeriod", "5m", "quietPeriodd", "5m"));
        assertThatThrownBy(() -> {
            r.duration("quietPeriod", Duration.ZERO);
            r.finish();
        }).hasMessageContaining("unknown configuration key(s) [quietPeriodd]");
        ConfigReader bad = new ConfigReader("nvidia", Map.of("quietPeriod", "soon"));
        assertThatThrownBy(() -> bad.duration("quietPeriod", Duration.ZERO))
                .hasMessageContaining("'quietPeriod' is 'soon'").hasMessageContaining("expected a duration");
    }
}
