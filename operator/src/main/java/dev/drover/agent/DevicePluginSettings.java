package dev.drover.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.DevicePlugins;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The file's {@code devicePluginConfig}: each running device plugin's settings by its name
 * ({@code nvidia: {devices: [0, 1]}}), added to what {@code --device-plugin NAME:ARG} says and checked by the
 * plugin at start, so a bad value stops the agent rather than a plugin that keeps failing later.
 */
final class DevicePluginSettings {

    static final String KEY = "devicePluginConfig";
    /** The file's list of plugins to run. */
    static final String FILE_KEY = "devicePlugins";
    /** The environment's list of plugins to run, comma-separated. */
    static final String ENV = "DROVER_DEVICE_PLUGINS";

    private DevicePluginSettings() {}

    /**
     * The device plugins to run ({@code NAME[:ARG]}) and each one's settings, as the agent and {@code devices} read
     * them.
     */
    record Chosen(List<String> plugins, Map<String, Map<String, Object>> settings) {
        Chosen {
            plugins = List.copyOf(plugins);
            settings = Map.copyOf(settings);
        }

        /** Each plugin with its settings; already checked by {@link #choose}. */
        List<DevicePlugins.Selection> selections() {
            return DevicePluginSettings.selections(DevicePlugins.discover(), plugins, settings);
        }
    }

    /**
     * The plugins the command line names ({@code --device-plugin}, repeated), else {@code $DROVER_DEVICE_PLUGINS}
     * (comma-separated), else the file's {@code devicePlugins}; with the file's {@code devicePluginConfig}, checked
     * as the agent checks them at start.
     */
    static Chosen choose(List<String> flagged, Map<String, String> env, JsonNode file) throws ConfigException {
        List<String> plugins = new ArrayList<>(flagged);
        String fromEnv = env.get(ENV);
        if (plugins.isEmpty() && fromEnv != null) {
            Arrays.stream(fromEnv.split(","))
                    .map(String::trim)
                    .filter(p -> !p.isEmpty())
                    .forEach(plugins::add);
        }
        if (plugins.isEmpty() && file != null && file.has(FILE_KEY)) {
            file.get(FILE_KEY).forEach(p -> plugins.add(p.asText()));
        }
        Map<String, Map<String, Object>> settings = read(file);
        check(plugins, settings);
        return new Chosen(plugins, settings);
    }

    static Map<String, Map<String, Object>> read(JsonNode file) throws ConfigException {
        JsonNode node = file == null ? null : file.get(KEY);
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject()) {
            throw new ConfigException(
                    KEY + ": must map a plugin name to its settings, e.g. {nvidia: {devices: [0, 1]}}");
        }
        Map<String, Map<String, Object>> out = new TreeMap<>();
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            if (!e.getValue().isObject()) {
                throw new ConfigException(
                        KEY + "." + UserText.bare(e.getKey()) + ": must be a mapping of that plugin's settings");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> settings = new ObjectMapper().convertValue(e.getValue(), Map.class);
            out.put(e.getKey(), settings);
        }
        return out;
    }

    /** The plugins named by {@code NAME[:ARG]}, each with its settings; IllegalArgumentException as select's. */
    static List<DevicePlugins.Selection> selections(
            DevicePlugins known, List<String> plugins, Map<String, Map<String, Object>> settings) {
        List<DevicePlugins.Selection> out = new ArrayList<>();
        for (String p : plugins) {
            DevicePlugins.Selection s = known.select(p);
            out.add(s.withConfig(settings.getOrDefault(s.factory().name(), Map.of())));
        }
        return out;
    }

    /** Every plugin known, settings only for plugins that run, and every setting acceptable to its plugin. */
    static void check(List<String> plugins, Map<String, Map<String, Object>> settings) throws ConfigException {
        if (plugins.isEmpty() && settings.isEmpty()) {
            return;
        }
        DevicePlugins known = DevicePlugins.discover();
        List<DevicePlugins.Selection> selections;
        try {
            selections = selections(known, plugins, settings);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        Set<String> running = new TreeSet<>();
        selections.forEach(sel -> running.add(sel.factory().name()));
        for (String name : settings.keySet()) {
            if (!running.contains(name)) {
                String bare = UserText.bare(name);
                throw new ConfigException(KEY + "." + bare + ": no such device plugin runs (running: " + running
                        + "; known: " + known.names() + "); add --device-plugin " + bare
                        + " or remove its settings");
            }
        }
        for (DevicePlugins.Selection sel : selections) {
            try {
                sel.check();
            } catch (DevicePluginException e) {
                throw new ConfigException(KEY + "." + sel.factory().name() + ": " + e.getMessage());
            }
        }
    }
}
