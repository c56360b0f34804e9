package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.CheckStatus;
import java.util.Objects;

/**
 * What one probe of a check found: an http check passes on 2xx, warns on 429 and is critical otherwise; a tcp check
 * passes when it connects; an exec check passes on exit 0 and warns on exit 1. A probe that times out is critical.
 *
 * @param output what the probe said (the start of a body, a command's output, an error); may be empty
 */
public record ProbeResult(CheckStatus.Status status, String output) {

    public ProbeResult {
        Objects.requireNonNull(status, "status");
        output = output == null ? "" : output;
    }

    public static ProbeResult passing(String output) {
        return new ProbeResult(CheckStatus.Status.PASSING, output);
    }

    public static ProbeResult warning(String output) {
        return new ProbeResult(CheckStatus.Status.WARNING, output);
    }

    public static ProbeResult critical(String output) {
        return new ProbeResult(CheckStatus.Status.CRITICAL, output);
    }
}
