package dev.drover.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DevicePluginsTest {

    @Test
    void serviceLoaderFindsPluginsByName() {
        DevicePlugins plugins = DevicePlugins.discover();
        assertThat(plugins.names()).contains("fake", "nvidia");
        assertThat(plugins.factory("fake"))
                .get()
                .extracting(DevicePluginFactory::name)
                .isEqualTo("fake");
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
        assertThatThrownBy(s::start)
                .isInstanceOf(DevicePluginException.class)
                .hasMessageContaining("'file' is missing");
    }

    @Test
    void unknownConfigKeyIsAnErrorNotADefault() {
        assertThatThrownBy(() -> DevicePlugins.discover()
                        .select("nvidia")
                        .factory()
                        .create()
                        .configure(Map.of("quietPeriod", "5m", "quietPeriodd", "5m")))
                .isInstanceOf(DevicePluginException.class)
                .hasMessageContaining("device plugin nvidia: config.quietPeriodd: unknown key");
    }

    @Test
    void everyBadValueIsNamedInOneMessage() {
        assertThatThrownBy(() -> DevicePlugins.discover()
                        .select("nvidia")
                        .factory()
                        .create()
                        .configure(Map.of("quietPeriod", "soon", "applicationXids", List.of(13, "x"))))
                .isInstanceOf(DevicePluginException.class)
                .hasMessageContaining("config.quietPeriod: \"soon\" is not a duration")
                .hasMessageContaining("config.applicationXids: [13, x] is not a list of whole numbers");
    }

    /** Plugin configuration reads durations in the Allocations' grammar (it had one of its own). */
    @Test
    void pluginDurationsAreAllocationDurations() {
        assertThatThrownBy(() -> DevicePlugins.discover()
                        .select("nvidia")
                        .factory()
                        .create()
                        .configure(Map.of("quietPeriod", "99999999999999h")))
                .isInstanceOf(DevicePluginException.class)
                .hasMessageContaining("config.quietPeriod: \"99999999999999h\" is too long a duration");
    }
}
