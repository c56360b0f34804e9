package dev.drover.deviceplugin;

import java.util.Map;

/**
 * Makes plugins of one kind; found with {@link java.util.ServiceLoader} (listed in
 * {@code META-INF/services/dev.drover.deviceplugin.DevicePluginFactory}). A device manager keeps the factory
 * and makes a fresh plugin each time it restarts a failed one.
 */
public interface DevicePluginFactory {

    /** The name users write: {@code nvidia}, {@code fake}. */
    String name();

    /** A new, unconfigured plugin. */
    DevicePlugin create();

    /**
     * The configuration meant by the argument after the colon in {@code --device-plugin NAME:ARG} (for
     * {@code fake}, the file; for {@code nvidia}, the library path). An empty argument means defaults.
     */
    Map<String, Object> configFromArgument(String argument);

    /**
     * Fails, naming every problem, on a configuration that {@link DevicePlugin#configure} would refuse for
     * itself (an unknown key, a bad value), without touching devices: the agent checks its settings at start.
     */
    default void checkConfig(Map<String, Object> config) throws DevicePluginException {}
}
