package dev.drover.bench;

import dev.drover.image.ImageReference;
import dev.drover.image.ImageStore;
import dev.drover.image.Platform;
import dev.drover.image.PullListener;
import dev.drover.image.PullPolicy;
import dev.drover.image.RegistryClient;
import dev.drover.image.RegistryTls;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Pulls of an image through the agent's own image store ({@link ImageStore}: manifest, layers fetched and their
 * digests checked, layers unpacked into a root filesystem), with the registry client and TLS the agent builds from
 * its {@code --registry-ca-file}: the {@code --driver oci} run's image put into the agent's store before it starts,
 * and the {@code pull} subcommand's timed pulls.
 */
final class ImagePulls {

    /** What one image may hold, as the agent's default {@code maxImageSizeMB} (20 GiB). */
    static final long MAX_IMAGE_BYTES = 20L << 30;

    /** The agent's registry timeout. */
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** One pull: the bytes fetched (layers and config) and how long the whole pull took, unpacking included. */
    record Pulled(long bytes, double seconds) {}

    private ImagePulls() {}

    /**
     * Pulls {@code image} into the store at {@code storeDir} (created when missing; the agent's is
     * {@code DATA_DIR/images}) from its registry, whatever the store holds ({@code Always}).
     */
    static Pulled pull(Path storeDir, String image, Path registryCaFile) throws IOException, InterruptedException {
        ImageReference ref = ImageReference.parse(image);
        AtomicLong bytes = new AtomicLong();
        PullListener told = new PullListener() {
            @Override
            public void downloading(ImageReference i, long fetched, long total) {}

            @Override
            public void downloaded(ImageReference i, long fetched, Duration took, boolean cached) {
                bytes.set(fetched);
            }
        };
        Clock clock = Clock.systemUTC();
        try (RegistryClient registries =
                new RegistryClient(RegistryTls.context(Optional.ofNullable(registryCaFile)), TIMEOUT, clock)) {
            ImageStore store = new ImageStore(storeDir, registries, Platform.node(), MAX_IMAGE_BYTES, clock);
            long begin = System.nanoTime();
            ImageStore.Image pulled = store.pull(ref, PullPolicy.Always, Optional.empty(), told);
            double seconds = (System.nanoTime() - begin) / 1e9;
            store.release(pulled.manifest());
            return new Pulled(bytes.get(), seconds);
        }
    }
}
