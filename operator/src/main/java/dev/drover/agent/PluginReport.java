package dev.drover.agent;

import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.InstanceStats;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code drover-agent devices} learnt of one plugin: its name and version, the configuration it ran with, its
 * fingerprint, a statistics sample by instance ID (empty unless asked for), or the one sentence saying why it failed.
 */
record PluginReport(
        String name,
        String version,
        Map<String, Object> config,
        Optional<Fingerprint> fingerprint,
        Map<String, InstanceStats> stats,
        Optional<String> error) {

    PluginReport {
        config = Map.copyOf(config);
        stats = Map.copyOf(stats);
    }

    static PluginReport failed(String name, String version, Map<String, Object> config, String error) {
        return new PluginReport(name, version, config, Optional.empty(), Map.of(), Optional.of(error));
    }
}
