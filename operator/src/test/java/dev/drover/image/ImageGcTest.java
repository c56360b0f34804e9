package dev.drover.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Image garbage collection as the kubelet's: by disk thresholds least recently used first, by age, never in use. */
class ImageGcTest {

    @TempDir
    static Path dir;

    private static TestRegistry registry;

    @BeforeAll
    static void registry() throws Exception {
        registry = TestRegistry.start(Files.createDirectory(dir.resolve("registry")), TestRegistry.Auth.NONE);
        for (String name : new String[] {"a", "b", "c"}) {
            registry.push(
                    "gc/" + name,
                    "1",
                    TestImage.of(
                            Map.of(),
                            false,
                            new TestImage.Layer(TestImage.Compression.GZIP).file(name, "x".repeat(1000), 0644)));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        registry.close();
    }

    /** A disk of 10 000 bytes with {@code used} of them taken (each image here holds 1 000). */
    private record FakeDisk(long used) implements ImageGc.Disk {
        @Override
        public long total() {
            return 10_000;
        }

        @Override
        public long free() {
            return 10_000 - used;
        }
    }

    private static ImageStore store(Path at) throws Exception {
        return new ImageStore(
                at,
                new RegistryClient(registry.tls(), Duration.ofSeconds(10), InstantSource.system()),
                Platform.node(),
                64L * 1024 * 1024,
                InstantSource.system());
    }

    private static ImageStore.Image pull(ImageStore store, String name) throws Exception {
        return store.pull(
                ImageReference.parse(registry.host() + "/gc/" + name + ":1"),
                PullPolicy.IfNotPresent,
                Optional.empty(),
                PullListener.NONE);
    }

    private static void lastUsed(Path store, ImageStore.Image image, Duration ago) throws Exception {
        Files.setLastModifiedTime(
                store.resolve("images").resolve(image.manifest().hex()),
                FileTime.from(Instant.now().minus(ago)));
    }

    @Test
    void aFullDiskLosesTheLeastRecentlyUsedImagesNoTaskHoldsDownToTheLowThreshold(@TempDir Path at) throws Exception {
        ImageStore store = store(at);
        ImageStore.Image a = pull(store, "a");
        ImageStore.Image b = pull(store, "b");
        ImageStore.Image c = pull(store, "c");
        store.release(a.manifest());
        store.release(b.manifest()); // c stays held: a task uses it
        lastUsed(at, a, Duration.ofHours(3));
        lastUsed(at, b, Duration.ofHours(2));
        lastUsed(at, c, Duration.ofHours(4));
        ImageGc gc = new ImageGc(
                store,
                new ImageGc.Thresholds(85, 80, Duration.ofMinutes(2), Duration.ZERO),
                new FakeDisk(9_500), // 95 %: a (1 000) and b (1 000) go to reach 80 %; c is held
                InstantSource.system());
        assertThat(gc.collect()).containsExactly(a.manifest(), b.manifest());
        assertThat(store.cached(ImageReference.parse(registry.host() + "/gc/c:1")))
                .isPresent();
        assertThat(store.cached(ImageReference.parse(registry.host() + "/gc/a:1")))
                .isEmpty();
        assertThat(at.resolve("tmp")).isEmptyDirectory();
        assertThat(pull(store, "a").rootfs().resolve("a")).exists(); // fetched again
    }

    @Test
    void aDiskBelowItsHighThresholdKeepsEveryImageAndAFreshOneIsNeverCollected(@TempDir Path at) throws Exception {
        ImageStore store = store(at);
        ImageStore.Image a = pull(store, "a");
        store.release(a.manifest());
        ImageGc.Thresholds t = new ImageGc.Thresholds(85, 80, Duration.ofMinutes(2), Duration.ZERO);
        assertThat(new ImageGc(store, t, new FakeDisk(8_500), InstantSource.system()).collect())
                .isEmpty();
        assertThat(new ImageGc(store, t, new FakeDisk(9_900), InstantSource.system()).collect())
                .as("used a moment ago: younger than minAge")
                .isEmpty();
    }

    @Test
    void anImageUnusedForLongerThanMaxAgeGoesWhateverTheDisk(@TempDir Path at) throws Exception {
        ImageStore store = store(at);
        ImageStore.Image a = pull(store, "a");
        ImageStore.Image b = pull(store, "b");
        store.release(a.manifest());
        store.release(b.manifest());
        lastUsed(at, a, Duration.ofDays(8));
        lastUsed(at, b, Duration.ofDays(1));
        ImageGc.Thresholds t = new ImageGc.Thresholds(85, 80, Duration.ofMinutes(2), Duration.ofDays(7));
        assertThat(new ImageGc(store, t, new FakeDisk(100), InstantSource.system()).collect())
                .containsExactly(a.manifest());
    }

    @Test
    void thresholdsThatCannotHoldAreRefused() {
        assertThatThrownBy(() -> new ImageGc.Thresholds(70, 80, Duration.ZERO, Duration.ZERO))
                .hasMessageContaining("must be at most highThresholdPercent");
        assertThatThrownBy(() -> new ImageGc.Thresholds(85, 80, Duration.ofMinutes(-1), Duration.ZERO))
                .hasMessageContaining("must not be negative");
    }
}
