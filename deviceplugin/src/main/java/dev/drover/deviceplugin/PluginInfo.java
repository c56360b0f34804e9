package dev.drover.deviceplugin;

import java.util.Objects;

/** A plugin's name (as used in {@code --device-plugin NAME:ARG}) and version. */
public record PluginInfo(String name, String version) {
    public PluginInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(version, "version");
    }
}
