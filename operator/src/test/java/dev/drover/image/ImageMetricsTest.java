package dev.drover.image;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.client.CollectorRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The image series as a scrape shows them after real pulls. */
class ImageMetricsTest {

    @TempDir
    static Path dir;

    private static TestRegistry registry;

    @BeforeAll
    static void registry() throws Exception {
        registry = TestRegistry.start(Files.createDirectory(dir.resolve("registry")), TestRegistry.Auth.NONE);
        registry.push(
                "tools/busybox",
                "1",
                TestImage.of(
                        Map.of("Entrypoint", List.of("/bin/sh")),
                        false,
                        new TestImage.Layer(TestImage.Compression.GZIP).busybox()));
    }

    @AfterAll
    static void stop() throws Exception {
        registry.close();
    }

    @Test
    void pullsCacheHitsAndTheStoreAreSeries(@TempDir Path at) throws Exception {
        try (RegistryClient client =
                new RegistryClient(registry.tls(), Duration.ofSeconds(10), InstantSource.system())) {
            ImageStore store = new ImageStore(at, client, Platform.node(), 64L << 20, InstantSource.system());
            CollectorRegistry scrape = new CollectorRegistry();
            store.metrics().register(scrape);
            assertThat(scrape.getSampleValue("drover_image_store_images")).isZero();
            assertThat(scrape.getSampleValue("drover_image_pull_seconds_count")).isZero();

            ImageReference ref = ImageReference.parse(registry.host() + "/tools/busybox:1");
            long[] fetched = {0};
            store.pull(ref, PullPolicy.IfNotPresent, Optional.empty(), new PullListener() {
                @Override
                public void downloading(ImageReference image, long bytes, long total) {}

                @Override
                public void downloaded(ImageReference image, long bytes, Duration took, boolean cached) {
                    fetched[0] = bytes;
                }
            });
            assertThat(fetched[0])
                    .as("the task's listener still hears the pull")
                    .isPositive();
            assertThat(scrape.getSampleValue("drover_image_pull_seconds_count")).isEqualTo(1.0);
            assertThat(scrape.getSampleValue("drover_image_pull_bytes_total")).isEqualTo((double) fetched[0]);
            assertThat(scrape.getSampleValue("drover_image_cache_hits_total")).isZero();

            store.pull(ref, PullPolicy.IfNotPresent, Optional.empty(), PullListener.NONE);
            store.pull(ref, PullPolicy.Always, Optional.empty(), PullListener.NONE);
            assertThat(scrape.getSampleValue("drover_image_cache_hits_total"))
                    .as("found on the node, and asked for again but already held")
                    .isEqualTo(2.0);
            assertThat(scrape.getSampleValue("drover_image_pull_seconds_count")).isEqualTo(1.0);
            assertThat(scrape.getSampleValue("drover_image_store_images")).isEqualTo(1.0);
            assertThat(scrape.getSampleValue("drover_image_store_bytes"))
                    .as("busybox unpacked")
                    .isGreaterThan(100_000.0);
        }
    }
}
