package dev.drover.driver.oci;

import dev.drover.driver.DriverEvent;
import dev.drover.image.ImageReference;
import dev.drover.image.PullListener;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * A pull as its task's events tell it, the way the kubelet tells a Pod's: one {@code Downloading} when the first bytes
 * come (the image and its size), then {@code Downloaded} with what was fetched and how long it took, or that the node
 * had the image already.
 */
final class PullEvents implements PullListener {

    private final Consumer<DriverEvent> events;
    private boolean told;

    PullEvents(Consumer<DriverEvent> events) {
        this.events = events;
    }

    @Override
    public synchronized void downloading(ImageReference image, long bytes, long total) {
        if (!told) {
            told = true;
            events.accept(new DriverEvent(
                    DriverEvent.Kind.DOWNLOADING, "Downloading image " + image + " (" + megabytes(total) + ")"));
        }
    }

    @Override
    public void downloaded(ImageReference image, long bytes, Duration took, boolean cached) {
        String message = cached
                ? "Image " + image + " is already on the node"
                : "Downloaded image " + image + ": " + megabytes(bytes) + " in "
                        + String.format(Locale.ROOT, "%.1f s", took.toMillis() / 1000.0);
        events.accept(new DriverEvent(DriverEvent.Kind.DOWNLOADED, message));
    }

    private static String megabytes(long bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / 1e6);
    }
}
