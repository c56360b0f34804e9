package dev.drover.image;

import java.time.Duration;

/** What a pull tells as it goes: for a task's {@code Downloading} and {@code Downloaded} events and the metrics. */
public interface PullListener {

    /** {@code bytes} of the image's {@code total} are fetched (layers and config). */
    void downloading(ImageReference image, long bytes, long total);

    /** The image is on the node: fetched now ({@code bytes} in {@code took}), or found there ({@code cached}). */
    void downloaded(ImageReference image, long bytes, Duration took, boolean cached);

    /** A listener that hears nothing. */
    PullListener NONE = new PullListener() {
        @Override
        public void downloading(ImageReference image, long bytes, long total) {}

        @Override
        public void downloaded(ImageReference image, long bytes, Duration took, boolean cached) {}
    };
}
