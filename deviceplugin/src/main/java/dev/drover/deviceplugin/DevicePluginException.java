package dev.drover.deviceplugin;

/** A plugin call failed; the message says what and, where the user can act, what to do. */
public class DevicePluginException extends Exception {

    public DevicePluginException(String message) {
        super(message);
    }

    public DevicePluginException(String message, Throwable cause) {
        super(message, cause);
    }
}
