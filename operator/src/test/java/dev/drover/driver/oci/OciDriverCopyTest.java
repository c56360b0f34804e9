package dev.drover.driver.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.devices.cdi.CdiRegistry;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.image.ImageStore;
import dev.drover.image.Platform;
import dev.drover.image.RegistryClient;
import dev.drover.image.TestImage;
import dev.drover.image.TestRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The oci driver where the node has no overlays ({@link RootfsMode#COPY}): each container's root filesystem is a copy
 * of its image's, run by the real runc.
 */
class OciDriverCopyTest {

    @TempDir
    static Path shared;

    @TempDir
    Path dir;

    private static TestRegistry registry;
    private static String image;

    private final LogRotator rotator = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
    private OciDriver driver;
    private Path store;

    @BeforeAll
    static void registry() throws Exception {
        RuncContainerTest.requireRunc();
        registry = TestRegistry.start(Files.createDirectory(shared.resolve("registry")), TestRegistry.Auth.NONE);
        byte[] data = "pristine\n".getBytes(StandardCharsets.UTF_8);
        TarArchiveEntry owned = new TarArchiveEntry("srv/data");
        owned.setMode(0100640);
        owned.setSize(data.length);
        owned.setUserId(1234);
        owned.setGroupId(2345);
        registry.push(
                "apps/shell",
                "1",
                TestImage.of(
                        Map.of("Entrypoint", List.of("/bin/sh", "-c"), "Env", List.of("PATH=/bin")),
                        false,
                        new TestImage.Layer(TestImage.Compression.GZIP)
                                .busybox()
                                .dir("srv", 0755)
                                .entry(owned, data)
                                .hardlink("srv/data-link", "srv/data")
                                .file("srv/su", "#!/bin/sh\n", 04755)
                                .symlink("srv/host", "/etc/hostname")));
        image = registry.host() + "/apps/shell:1";
    }

    @AfterAll
    static void stop() throws Exception {
        registry.close();
    }

    @BeforeEach
    void aDriverThatCopies() throws Exception {
        driver = new OciDriver(
                Clock.systemUTC(),
                rotator,
                List.of(),
                TaskCgroups.none(),
                Optional.empty(),
                new ImageStore(
                        dir.resolve("images"),
                        new RegistryClient(registry.tls(), Duration.ofSeconds(10), InstantSource.system()),
                        Platform.node(),
                        256L * 1024 * 1024,
                        InstantSource.system()),
                RuncContainerTest.RUNC,
                new OciDriver.OciSettings(
                        false, false, Optional.empty(), new CdiRegistry(List.of(), Set.of()), RootfsMode.COPY));
    }

    @AfterEach
    void close() {
        driver.close();
        rotator.close();
    }

    private TaskConfig task(String name, String script, Map<String, Object> more) throws Exception {
        Path alloc = Files.createDirectories(dir.resolve("alloc"));
        Path taskDir = dir.resolve(name);
        for (String sub : List.of("local", "secrets", "tmp")) {
            Files.createDirectories(taskDir.resolve(sub));
        }
        Files.createDirectories(alloc.resolve("logs"));
        Files.deleteIfExists(alloc.resolve("logs").resolve(name + ".stdout.0"));
        Map<String, Object> c = new HashMap<>(more);
        c.put("image", image);
        c.put("args", List.of(script));
        return new TaskConfig(
                "default",
                "web",
                name,
                c,
                Map.of(),
                alloc,
                taskDir,
                alloc.resolve("logs"),
                taskDir.resolve("secrets"),
                null,
                null);
    }

    /** Runs the task to its end; its bundle is destroyed only when {@code destroy}. */
    private ExitResult run(TaskConfig t, boolean destroy) throws Exception {
        TaskHandle h = driver.start(t);
        try {
            return driver.exit(h).get(30, TimeUnit.SECONDS);
        } finally {
            if (destroy) {
                driver.destroy(h);
            }
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    /** The image's unpacked {@code srv/data} in the node's store. */
    private Path storedData() throws Exception {
        try (var found =
                Files.find(dir.resolve("images"), 8, (p, a) -> p.endsWith("rootfs/srv/data") && a.isRegularFile())) {
            return found.findFirst().orElseThrow();
        }
    }

    @Test
    void theContainerRunsOnACopyThatIsTheImageAndItsWritesNeverReachTheStore() throws Exception {
        TaskConfig t = task(
                "writer",
                "busybox stat -c '%a %u:%g %h' /srv/data /srv/su; busybox readlink /srv/host;"
                        + " cat /srv/host 2>/dev/null || echo not from the host; echo changed > /srv/data;"
                        + " cat /srv/data-link; touch /marker && echo written",
                Map.of());
        assertThat(run(t, false)).as(() -> read(t.stdout()) + read(t.stderr())).isEqualTo(ExitResult.code(0));
        assertThat(Files.readString(t.stdout()))
                .isEqualTo("640 1234:2345 2\n4755 0:0 1\n/etc/hostname\nnot from the host\nchanged\nwritten\n");
        Path copy = t.taskDir().resolve(OciDriver.BUNDLE).resolve("rootfs");
        assertThat(copy.resolve("marker"))
                .as("the writes are in the task's copy")
                .exists();
        assertThat(Files.readString(Path.of("/proc/self/mountinfo")))
                .as("nothing is mounted")
                .doesNotContain(t.taskDir().toString());
        assertThat(storedData()).hasContent("pristine");
        assertThat(storedData().resolveSibling("marker")).doesNotExist();
        assertThat(storedData().getParent().getParent().resolve("marker")).doesNotExist();

        TaskConfig other = task("reader", "cat /srv/data; ls /marker 2>&1; true", Map.of());
        assertThat(run(other, true)).isEqualTo(ExitResult.code(0));
        assertThat(Files.readString(other.stdout()))
                .as("a second task sees the image as it was pulled")
                .startsWith("pristine\n")
                .contains("No such file");

        TaskConfig again = task("writer", "cat /srv/data; ls /marker 2>&1; true", Map.of());
        TaskHandle h = driver.start(again);
        assertThat(driver.exit(h).get(30, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
        assertThat(Files.readString(again.stdout()))
                .as("a restarted task starts from the image again")
                .startsWith("pristine\n")
                .contains("No such file");
        driver.destroy(h);
        assertThat(t.taskDir().resolve(OciDriver.BUNDLE))
                .as("destroy removes the copy")
                .doesNotExist();
        assertThat(t.taskDir().resolve("local")).exists();
    }

    @Test
    void aPreparedCopyIsTheOneTheStartRunsAndADestroyRemovesOneNoStartTook() throws Exception {
        TaskConfig t = task("prepared", "cat /srv/data", Map.of());
        driver.prepare(t);
        Path made = t.taskDir().resolve(RootfsCopy.PREPARED);
        assertThat(made.resolve("srv/data")).hasContent("pristine");
        Files.writeString(made.resolve("srv/prepared"), "by the prepare\n");
        TaskConfig reading = task("prepared", "cat /srv/prepared", Map.of());
        TaskHandle h = driver.start(reading);
        assertThat(driver.exit(h).get(30, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
        assertThat(Files.readString(reading.stdout())).isEqualTo("by the prepare\n");
        assertThat(made).as("moved into the bundle").doesNotExist();

        driver.prepare(reading);
        assertThat(made).exists();
        driver.destroy(h);
        assertThat(made).doesNotExist();
        assertThat(t.taskDir().resolve(OciDriver.BUNDLE)).doesNotExist();
    }

    @Test
    void aReadOnlyRootFilesystemIsReadOnlyOnACopyToo() throws Exception {
        TaskConfig t = task(
                "readonly",
                "(touch /marker) 2>&1; echo x > /tmp/ok && cat /tmp/ok",
                Map.of("readOnlyRootFilesystem", true));
        assertThat(run(t, true)).isEqualTo(ExitResult.code(0));
        assertThat(Files.readString(t.stdout()))
                .contains("Read-only file system")
                .endsWith("x\n");
    }

    @Test
    void aLongRunningContainerIsStoppedAndItsCopyRemoved() throws Exception {
        TaskConfig t = task("long", "trap 'exit 0' TERM; echo up; while true; do sleep 1; done", Map.of());
        TaskHandle h = driver.start(t);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> Files.readString(t.stdout()).contains("up"));
        driver.stop(h, Duration.ofSeconds(10), "SIGTERM");
        assertThat(driver.exit(h).get(20, TimeUnit.SECONDS).exitCode()).isEqualTo(0);
        driver.destroy(h);
        assertThat(t.taskDir().resolve(OciDriver.BUNDLE)).doesNotExist();
    }
}
