package dev.drover.driver.oci;

import java.util.Optional;

/**
 * How a container's root filesystem is made from its image: an overlay whose upper directory is the task's
 * ({@link OciConfinement}), or, where the node cannot mount one, a copy of the image's ({@link RootfsCopy}): slower to
 * start, and as large again on disk for each task. {@link OverlayCheck} finds which a node can do.
 */
public enum RootfsMode {
    OVERLAY,
    COPY;

    /** {@code overlay} or {@code copy}, as the agent's {@code ociRootfs} names them; empty for anything else. */
    public static Optional<RootfsMode> parse(String name) {
        return switch (name) {
            case "overlay" -> Optional.of(OVERLAY);
            case "copy" -> Optional.of(COPY);
            default -> Optional.empty();
        };
    }
}
