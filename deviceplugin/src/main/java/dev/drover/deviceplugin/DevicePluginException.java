package dev.drover.deviceplugin;

import dev.drover.common.ConfigReader;
import java.util.List;

/** A plugin call failed; the message says what and, where the user can act, what to do. */
public class DevicePluginException extends Exception {

    public DevicePluginException(String message) {
        super(message);
    }

    public DevicePluginException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Fails with every problem {@code config} found in {@code plugin}'s configuration, if it found any. */
    public static void checkConfig(String plugin, ConfigReader config) throws DevicePluginException {
        List<String> problems = config.problems();
        if (!problems.isEmpty()) {
            throw new DevicePluginException("device plugin " + plugin + ": " + String.join("; ", problems));
        }
    }
}
