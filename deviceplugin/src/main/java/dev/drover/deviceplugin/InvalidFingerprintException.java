package dev.drover.deviceplugin;

import java.util.List;

/** A fingerprint broke the rules of {@link FingerprintValidator}; it is rejected whole. */
public final class InvalidFingerprintException extends DevicePluginException {

    private final List<String> problems;

    public InvalidFingerprintException(String pluginName, List<String> problems) {
        super("device plugin " + pluginName + " sent an invalid fingerprint, rejected whole: "
                + String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
