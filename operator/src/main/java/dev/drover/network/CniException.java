package dev.drover.network;

import java.io.IOException;

/**
 * A CNI plugin failed, could not be run, or answered with what is no CNI result. The message names the plugin and
 * what it said (its error's {@code msg} and {@code details}, escaped and cut: plugin output is hostile input);
 * {@link #code} is its CNI error code, or 0 when it wrote none.
 */
public final class CniException extends IOException {

    private final String plugin;
    private final int code;

    CniException(String plugin, int code, String message) {
        super(message);
        this.plugin = plugin;
        this.code = code;
    }

    CniException(String plugin, String message, Throwable cause) {
        super(message, cause);
        this.plugin = plugin;
        this.code = 0;
    }

    /** The plugin's type ({@code bridge}, {@code portmap}). */
    public String plugin() {
        return plugin;
    }

    /** The plugin's CNI error code (1 to 99 the spec's, 100 and up its own), or 0 when it gave none. */
    public int code() {
        return code;
    }
}
