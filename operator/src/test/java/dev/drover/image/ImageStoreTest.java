package dev.drover.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Images pulled from a real registry into the node's store: layers stacked, whiteouts applied, hostile ones refused. */
class ImageStoreTest {

    private static final long BOUND = 64L * 1024 * 1024;

    @TempDir
    static Path dir;

    private static TestRegistry registry;

    @BeforeAll
    static void registry() throws Exception {
        registry = TestRegistry.start(Files.createDirectory(dir.resolve("registry")), TestRegistry.Auth.NONE);
    }

    @AfterAll
    static void stop() throws Exception {
        registry.close();
    }

    private static ImageStore store(Path at) throws Exception {
        return new ImageStore(
                at,
                new RegistryClient(registry.tls(), Duration.ofSeconds(10), InstantSource.system()),
                Platform.node(),
                BOUND,
                InstantSource.system());
    }

    private static ImageReference ref(String repoTag) {
        return ImageReference.parse(registry.host() + "/" + repoTag);
    }

    /** Records what a pull tells. */
    private static final class Told implements PullListener {
        final List<Long> progress = new CopyOnWriteArrayList<>();
        final List<Boolean> done = new CopyOnWriteArrayList<>();

        @Override
        public void downloading(ImageReference image, long bytes, long total) {
            progress.add(bytes);
        }

        @Override
        public void downloaded(ImageReference image, long bytes, Duration took, boolean cached) {
            done.add(cached);
        }
    }

    @Test
    void aPulledImageIsItsLayersStackedWithItsProcessFromTheConfig(@TempDir Path at) throws Exception {
        registry.push(
                "tools/busybox",
                "1",
                TestImage.of(
                        Map.of("Entrypoint", List.of("/bin/sh"), "Cmd", List.of("-c", "id"), "WorkingDir", "/srv"),
                        false,
                        new TestImage.Layer(TestImage.Compression.GZIP).busybox()));
        Told told = new Told();
        ImageStore.Image image =
                store(at).pull(ref("tools/busybox:1"), PullPolicy.IfNotPresent, Optional.empty(), told);
        assertThat(image.rootfs().resolve("bin/busybox")).isExecutable();
        assertThat(Files.readSymbolicLink(image.rootfs().resolve("bin/sh"))).hasToString("busybox");
        assertThat(image.config().entrypoint()).containsExactly("/bin/sh");
        assertThat(image.config().cmd()).containsExactly("-c", "id");
        assertThat(image.config().workingDir()).isEqualTo("/srv");
        assertThat(told.progress).isNotEmpty();
        assertThat(told.done).containsExactly(false);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(at)))
                .isEqualTo("rwx------");
    }

    @Test
    void laterLayersReplaceWhiteoutsDeleteAndOpaqueDirectoriesHideWhatIsBelow(@TempDir Path at) throws Exception {
        TestImage.Layer base = new TestImage.Layer(TestImage.Compression.NONE)
                .file("etc/a", "a", 0644)
                .file("etc/b", "b", 0644)
                .file("data/x/old", "old", 0644)
                .file("data/keep-not", "gone", 0644)
                .file("conf", "file first", 0644)
                .file("bin/tool", "v1", 04755);
        TestImage.Layer top = new TestImage.Layer(TestImage.Compression.ZSTD)
                .whiteout("etc/a")
                .file("data/x/new", "new", 0644)
                .opaque("data")
                .dir("conf", 0755)
                .file("conf/inside", "dir now", 0600)
                .file("bin/tool", "v2", 04755);
        registry.push("tools/stack", "1", TestImage.of(Map.of(), false, base, top));
        Path root = store(at)
                .pull(ref("tools/stack:1"), PullPolicy.IfNotPresent, Optional.empty(), PullListener.NONE)
                .rootfs();
        assertThat(root.resolve("etc/a")).doesNotExist();
        assertThat(root.resolve("etc/b")).hasContent("b");
        assertThat(root.resolve("data/x/new")).hasContent("new");
        assertThat(root.resolve("data/x/old")).doesNotExist();
        assertThat(root.resolve("data/keep-not")).doesNotExist();
        assertThat(root.resolve("conf/inside")).hasContent("dir now");
        assertThat(root.resolve("bin/tool")).hasContent("v2");
        assertThat((int) Files.getAttribute(root.resolve("bin/tool"), "unix:mode") & 07777)
                .isEqualTo(04755);
    }

    @Test
    void anIndexGivesTheNodesPlatformAndAnImageWithoutOneIsRefusedNamingThoseItHas(@TempDir Path at) throws Exception {
        TestImage mine = TestImage.of(
                Map.of("Cmd", List.of("mine")),
                true,
                new TestImage.Layer(TestImage.Compression.GZIP).file("which", "mine", 0644));
        TestImage other = TestImage.of(
                Map.of("Cmd", List.of("other")),
                false,
                new TestImage.Layer(TestImage.Compression.GZIP).file("which", "other", 0644));
        registry.push(
                "tools/multi",
                "1",
                TestImage.index(
                        Map.of("linux/s390x", other, "linux/" + Platform.node().architecture(), mine)));
        ImageStore store = store(at);
        ImageStore.Image image =
                store.pull(ref("tools/multi:1"), PullPolicy.IfNotPresent, Optional.empty(), PullListener.NONE);
        assertThat(image.rootfs().resolve("which")).hasContent("mine");
        registry.push("tools/foreign", "1", TestImage.index(Map.of("linux/s390x", other)));
        assertThatThrownBy(() -> store.pull(
                        ref("tools/foreign:1"), PullPolicy.IfNotPresent, Optional.empty(), PullListener.NONE))
                .hasMessageContaining("no manifest for this node's platform")
                .hasMessageContaining("linux/s390x");
    }

    @Test
    void theNodesCopyServesIfNotPresentAndNeverWhileAlwaysAsksTheRegistry(@TempDir Path at) throws Exception {
        ImageStore store = store(at);
        assertThatThrownBy(
                        () -> store.pull(ref("tools/policy:1"), PullPolicy.Never, Optional.empty(), PullListener.NONE))
                .hasMessage("image " + ref("tools/policy:1") + " is not on this node, and its pullPolicy is Never");
        registry.push(
                "tools/policy",
                "1",
                TestImage.of(Map.of(), false, new TestImage.Layer(TestImage.Compression.GZIP).file("v", "1", 0644)));
        Told first = new Told();
        store.pull(ref("tools/policy:1"), PullPolicy.IfNotPresent, Optional.empty(), first);
        Told again = new Told();
        store.pull(ref("tools/policy:1"), PullPolicy.Never, Optional.empty(), again);
        assertThat(again.done).containsExactly(true);
        registry.push(
                "tools/policy",
                "1",
                TestImage.of(Map.of(), false, new TestImage.Layer(TestImage.Compression.GZIP).file("v", "2", 0644)));
        assertThat(store.pull(ref("tools/policy:1"), PullPolicy.IfNotPresent, Optional.empty(), PullListener.NONE)
                        .rootfs()
                        .resolve("v"))
                .hasContent("1");
        assertThat(store.pull(ref("tools/policy:1"), PullPolicy.Always, Optional.empty(), PullListener.NONE)
                        .rootfs()
                        .resolve("v"))
                .hasContent("2");
        assertThat(store(at)
                        .cached(ref("tools/policy:1"))
                        .orElseThrow()
                        .rootfs()
                        .resolve("v"))
                .hasContent("2");
    }

    @Test
    void concurrentPullsOfOneImageFetchItOnce(@TempDir Path at) throws Exception {
        registry.push(
                "tools/once",
                "1",
                TestImage.of(Map.of(), false, new TestImage.Layer(TestImage.Compression.GZIP).busybox()));
        ImageStore store = store(at);
        Told told = new Told();
        List<Future<ImageStore.Image>> pulls = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 4; i++) {
                pulls.add(
                        pool.submit(() -> store.pull(ref("tools/once:1"), PullPolicy.Always, Optional.empty(), told)));
            }
        }
        for (Future<ImageStore.Image> f : pulls) {
            assertThat(f.get().rootfs().resolve("bin/busybox")).exists();
        }
        assertThat(told.done).hasSize(4).containsOnlyOnce(false);
    }

    @Test
    void aLayerThatDoesNotUnpackToItsConfigsDiffIdIsRefused(@TempDir Path at) throws Exception {
        registry.push(
                "tools/lying",
                "1",
                TestImage.withWrongDiffIds(new TestImage.Layer(TestImage.Compression.GZIP).file("x", "x", 0644)));
        assertThatThrownBy(() ->
                        store(at).pull(ref("tools/lying:1"), PullPolicy.Always, Optional.empty(), PullListener.NONE))
                .hasMessageContaining("does not unpack to the content its image's config names");
        assertThat(at.resolve("tmp")).isEmptyDirectory();
    }

    @Test
    void hostileLayersAreRefusedNamingTheEntryAndWriteNothingOutsideTheStore(@TempDir Path at) throws Exception {
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.writeString(outside.resolve("canary"), "untouched");
        String out = outside.toString().substring(1);
        Map<String, TestImage.Layer[]> hostile = Map.of(
                "climbs out", new TestImage.Layer[] {layer().file("../../evil", "x", 0644)},
                "through a link",
                        new TestImage.Layer[] {
                            layer().symlink("escape", outside.toString()),
                            layer().file("escape/canary", "overwritten", 0644)
                        },
                "hard link out", new TestImage.Layer[] {layer().hardlink("passwd", "../../../../etc/passwd")},
                "hard link to a link",
                        new TestImage.Layer[] {
                            layer().symlink("l", "/" + out + "/canary").hardlink("h", "l")
                        },
                "a device", new TestImage.Layer[] {layer().charDevice("dev/mem", 1, 1)},
                "whiteout out", new TestImage.Layer[] {layer().whiteout("../x")},
                "a huge file", new TestImage.Layer[] {TestImage.Layer.claiming("big", 10L * 1024 * 1024 * 1024)});
        ImageStore store = store(at);
        List<String> accepted = new ArrayList<>();
        for (var e : hostile.entrySet()) {
            String repo = "hostile/" + e.getKey().replace(' ', '-');
            registry.push(repo, "1", TestImage.of(Map.of(), false, e.getValue()));
            try {
                store.pull(ref(repo + ":1"), PullPolicy.Always, Optional.empty(), PullListener.NONE);
                accepted.add(e.getKey());
            } catch (ImagePullException refused) {
                assertThat(refused).as(e.getKey()).hasMessageContaining("entry \"");
            }
        }
        assertThat(accepted).as("hostile layers accepted").isEmpty();
        assertThat(outside.resolve("canary")).hasContent("untouched");
        assertThat(Files.list(outside)).containsExactly(outside.resolve("canary"));
        assertThat(at.resolve("tmp")).isEmptyDirectory();
        assertThat(Files.exists(dir.resolve("evil"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void aFileClaimingBytesItsLayerDoesNotHoldIsRefusedNamingIt(@TempDir Path at) throws Exception {
        registry.push("hostile/claim", "1", TestImage.of(Map.of(), false, TestImage.Layer.claiming("big", 10L << 30)));
        ImageStore roomy = new ImageStore(
                at,
                new RegistryClient(registry.tls(), Duration.ofSeconds(10), InstantSource.system()),
                Platform.node(),
                20L << 30, // the agent's default bound: the claim fits in it
                InstantSource.system());

        assertThatThrownBy(() ->
                        roomy.pull(ref("hostile/claim:1"), PullPolicy.Always, Optional.empty(), PullListener.NONE))
                .isInstanceOf(ImagePullException.class)
                .hasMessageContaining("entry \"big\"")
                .hasMessageContaining("claims 10737418240 bytes the layer does not hold");
        assertThat(at.resolve("tmp")).isEmptyDirectory();
    }

    @Test
    void aMirrorThatFailsGivesWayToTheRegistryAndTheAgentsCaFileIsTrusted(@TempDir Path at) throws Exception {
        registry.push(
                "tools/mirrored",
                "1",
                TestImage.of(Map.of(), false, new TestImage.Layer(TestImage.Compression.GZIP).file("m", "m", 0644)));
        ImageStore store = new ImageStore(
                at,
                new RegistryClient(
                        RegistryTls.context(Optional.of(registry.caFile())),
                        Duration.ofSeconds(5),
                        InstantSource.system()),
                Platform.node(),
                BOUND,
                InstantSource.system(),
                Map.of(registry.host(), List.of("127.0.0.1:1")));
        assertThat(store.pull(ref("tools/mirrored:1"), PullPolicy.Always, Optional.empty(), PullListener.NONE)
                        .rootfs()
                        .resolve("m"))
                .hasContent("m");
        try (RegistryClient systemOnly = new RegistryClient(
                RegistryTls.context(Optional.empty()), Duration.ofSeconds(5), InstantSource.system())) {
            assertThatThrownBy(
                            () -> systemOnly.manifest(registry.host(), ref("tools/mirrored:1"), "1", Optional.empty()))
                    .isInstanceOf(javax.net.ssl.SSLHandshakeException.class);
        }
    }

    private static TestImage.Layer layer() {
        return new TestImage.Layer(TestImage.Compression.GZIP);
    }
}
