package dev.drover.deviceplugin;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a plugin's configuration map key by key; errors name the plugin, the key, the value and what is
 * expected, and {@link #finish()} rejects keys nobody read (a misspelt key is an error, not a default).
 */
public final class ConfigReader {

    private final String plugin;
    private final Map<String, Object> config;
    private final Set<String> read = new HashSet<>();

    public ConfigReader(String plugin, Map<String, Object> config) {
        this.plugin = plugin;
        this.config = config == null ? Map.of() : config;
    }

    public String string(String key, String fallback) throws DevicePluginException {
        Object v = take(key);
        if (v == null) return fallback;
        if (v instanceof String s) return s;
        throw bad(key, v, "a string");
    }

    public Duration duration(String key, Duration fallback) throws DevicePluginException {
        Object v = take(key);
        if (v == null) return fallback;
        if (v instanceof Duration d) return d;
        if (v instanceof String s) {
            try {
                Duration d = DurationText.parse(s);
                if (!d.isNegative()) return d;
            } catch (IllegalArgumentException e) {
                // reported below with the key
            }
        }
        throw bad(key, v, "a duration such as 500ms, 30s or 5m");
    }

    public List<Integer> intList(String key, List<Integer> fallback) throws DevicePluginException {
        Object v = take(key);
        if (v == null) return fallback;
        if (v instanceof List<?> list) {
            List<Integer> out = new ArrayList<>();
            for (Object o : list) {
                if (o instanceof Integer i) {
                    out.add(i);
                } else if (o instanceof String s && s.strip().matches("\\d+")) {
                    out.add(Integer.parseInt(s.strip()));
                } else {
                    throw bad(key, v, "a list of integers");
                }
            }
            return List.copyOf(out);
        }
        throw bad(key, v, "a list of integers");
    }

    /** Fails when the map has keys that were not read. */
    public void finish() throws DevicePluginException {
        Set<String> unknown = new TreeSet<>(config.keySet());
        unknown.removeAll(read);
        if (!unknown.isEmpty()) {
            throw new DevicePluginException("device plugin " + plugin + ": unknown configuration key(s) "
                    + unknown + "; known: " + new TreeSet<>(read));
        }
    }

    private Object take(String key) {
        read.add(key);
        return config.get(key);
    }

    private DevicePluginException bad(String key, Object value, String expected) {
        return new DevicePluginException("device plugin " + plugin + ": configuration key '" + key + "' is '"
                + value + "'; expected " + expected);
    }
}
