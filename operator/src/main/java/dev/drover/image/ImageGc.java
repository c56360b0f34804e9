package dev.drover.image;

import dev.drover.common.UserText;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes images no task uses, as the kubelet's image garbage collection does: any unused for longer than
 * {@code maxAge} (when set), and, while the store's file system is fuller than {@code highPercent}, the least
 * recently used ones until it is down to {@code lowPercent}; never one used within {@code minAge}, nor one a task
 * holds ({@link ImageStore#retain}).
 */
public final class ImageGc {

    private static final Logger LOG = LoggerFactory.getLogger(ImageGc.class);

    /**
     * The agent's {@code imageGC} settings.
     *
     * @param maxAge zero for no age limit
     */
    public record Thresholds(int highPercent, int lowPercent, Duration minAge, Duration maxAge) {

        /** The kubelet's defaults: 85 %, 80 %, two minutes, no age limit. */
        public static final Thresholds DEFAULTS = new Thresholds(85, 80, Duration.ofMinutes(2), Duration.ZERO);

        public Thresholds {
            if (lowPercent < 0 || highPercent > 100 || lowPercent > highPercent) {
                throw new IllegalArgumentException("imageGC: lowThresholdPercent (" + lowPercent
                        + ") must be at most highThresholdPercent (" + highPercent + "), both within 0-100");
            }
            if (minAge.isNegative() || maxAge.isNegative()) {
                throw new IllegalArgumentException("imageGC: minAge and maxAge must not be negative");
            }
        }
    }

    /** The file system the store is on: its size and free bytes. */
    public interface Disk {
        long total() throws IOException;

        long free() throws IOException;
    }

    private final ImageStore store;
    private final Thresholds thresholds;
    private final Disk disk;
    private final InstantSource clock;

    public ImageGc(ImageStore store, Thresholds thresholds, Disk disk, InstantSource clock) {
        this.store = store;
        this.thresholds = thresholds;
        this.disk = disk;
        this.clock = clock;
    }

    /** The disk of {@code store}, as the file system reports it. */
    public static Disk diskOf(ImageStore store) {
        return new Disk() {
            @Override
            public long total() throws IOException {
                return java.nio.file.Files.getFileStore(store.directory()).getTotalSpace();
            }

            @Override
            public long free() throws IOException {
                return java.nio.file.Files.getFileStore(store.directory()).getUsableSpace();
            }
        };
    }

    /** One pass; returns the images removed. */
    public List<Digest> collect() throws IOException {
        Instant now = clock.instant();
        List<ImageStore.Stored> candidates = new ArrayList<>();
        for (ImageStore.Stored s : store.list()) {
            if (Duration.between(s.lastUsed(), now).compareTo(thresholds.minAge()) >= 0) {
                candidates.add(s);
            }
        }
        candidates.sort(Comparator.comparing(ImageStore.Stored::lastUsed));
        List<Digest> removed = new ArrayList<>();
        if (!thresholds.maxAge().isZero()) {
            for (ImageStore.Stored s : List.copyOf(candidates)) {
                if (Duration.between(s.lastUsed(), now).compareTo(thresholds.maxAge()) > 0
                        && store.removeUnused(s.manifest())) {
                    removed.add(s.manifest());
                    candidates.remove(s);
                    LOG.info("removed image {}: unused for more than {}", s.manifest(), thresholds.maxAge());
                }
            }
        }
        long total = disk.total();
        if (total <= 0) {
            return removed;
        }
        long used = total - disk.free();
        if (used * 100 <= thresholds.highPercent() * total) {
            return removed;
        }
        long target = thresholds.lowPercent() * total / 100;
        for (ImageStore.Stored s : candidates) {
            if (used <= target) {
                break;
            }
            if (store.removeUnused(s.manifest())) {
                removed.add(s.manifest());
                used -= s.bytes();
                LOG.info(
                        "removed image {} ({} MB): the disk was over {} % full",
                        s.manifest(), s.bytes() / (1024 * 1024), thresholds.highPercent());
            }
        }
        if (used > target) {
            LOG.warn(
                    "the image store's disk is still {} % full: the images left are in use or newer than {}",
                    used * 100 / total, UserText.value(thresholds.minAge()));
        }
        return removed;
    }
}
