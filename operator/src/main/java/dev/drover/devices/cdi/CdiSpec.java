package dev.drover.devices.cdi;

import java.util.Map;

/**
 * One CDI spec file, read and checked ({@link CdiSpecParser}).
 *
 * @param source  the file it was read from
 * @param kind    {@code vendor/class}, e.g. {@code nvidia.com/gpu}
 * @param devices each device's own edits, by its name within the kind, in the file's order
 * @param edits   the edits every container given any of its devices gets ({@code containerEdits} at the top)
 */
public record CdiSpec(
        String source, String version, String kind, Map<String, ContainerEdits> devices, ContainerEdits edits) {

    public CdiSpec {
        devices = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(devices));
    }
}
