package dev.drover.deviceplugin;

import dev.drover.common.UserText;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeMap;

/** The plugins on the class path, by name, and the {@code NAME[:ARG]} form users write. */
public final class DevicePlugins {

    private final Map<String, DevicePluginFactory> byName;

    private DevicePlugins(Map<String, DevicePluginFactory> byName) {
        this.byName = byName;
    }

    /** Factories found by {@link ServiceLoader} with the given class loader. */
    public static DevicePlugins discover(ClassLoader loader) {
        Map<String, DevicePluginFactory> byName = new TreeMap<>();
        for (DevicePluginFactory factory : ServiceLoader.load(DevicePluginFactory.class, loader)) {
            DevicePluginFactory previous = byName.putIfAbsent(factory.name(), factory);
            if (previous != null) {
                throw new IllegalStateException("two device plugins are named " + factory.name() + ": "
                        + previous.getClass().getName() + " and "
                        + factory.getClass().getName());
            }
        }
        return new DevicePlugins(byName);
    }

    public static DevicePlugins discover() {
        return discover(DevicePlugins.class.getClassLoader());
    }

    public List<String> names() {
        return List.copyOf(byName.keySet());
    }

    public Optional<DevicePluginFactory> factory(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /**
     * Parses {@code NAME[:ARG]} ({@code fake:examples/devices/fake-gpus.yaml}, {@code nvidia}) into the factory and
     * the configuration it means.
     *
     * @throws IllegalArgumentException naming the value and the known plugins when the name is unknown
     */
    public Selection select(String spec) {
        int colon = spec.indexOf(':');
        String name = colon < 0 ? spec : spec.substring(0, colon);
        String argument = colon < 0 ? "" : spec.substring(colon + 1);
        DevicePluginFactory factory = byName.get(name);
        if (factory == null) {
            throw new IllegalArgumentException("--device-plugin " + spec + ": no device plugin named '" + name
                    + "'; known: " + String.join(", ", byName.keySet()));
        }
        return new Selection(factory, factory.configFromArgument(argument));
    }

    /** A factory and the configuration each plugin it makes gets. */
    public record Selection(DevicePluginFactory factory, Map<String, Object> config) {
        public Selection {
            config = Map.copyOf(config);
        }

        /**
         * This selection with more settings ({@code devicePluginConfig.NAME} in the agent's file). A key the
         * argument already set ({@code nvidia:LIBRARY} sets {@code library}) may not be set again.
         *
         * @throws IllegalArgumentException naming the key set twice
         */
        public Selection withConfig(Map<String, Object> more) {
            Map<String, Object> merged = new TreeMap<>(config);
            for (Map.Entry<String, Object> e : more.entrySet()) {
                if (merged.putIfAbsent(e.getKey(), e.getValue()) != null) {
                    throw new IllegalArgumentException("devicePluginConfig." + factory.name() + "."
                            + UserText.bare(e.getKey())
                            + " is already set by --device-plugin " + factory.name() + ":...; set it in one place");
                }
            }
            return new Selection(factory, merged);
        }

        /** Fails on settings the plugin would refuse ({@link DevicePluginFactory#checkConfig}). */
        public void check() throws DevicePluginException {
            factory.checkConfig(config);
        }

        /** A new plugin, configured. */
        public DevicePlugin start() throws DevicePluginException {
            DevicePlugin plugin = factory.create();
            try {
                plugin.configure(config);
                return plugin;
            } catch (DevicePluginException | RuntimeException e) {
                plugin.close();
                throw e;
            }
        }
    }
}
