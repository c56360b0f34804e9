package dev.drover.driver.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.deviceplugin.PluginClock;
import dev.drover.deviceplugin.fake.FakeDeviceFileParser;
import dev.drover.deviceplugin.fake.FakeDevicePlugin;
import dev.drover.devices.cdi.CdiRegistry;
import dev.drover.driver.DriverEvent;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskAttachments;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskMount;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.image.ImageStore;
import dev.drover.image.Platform;
import dev.drover.image.RegistryClient;
import dev.drover.image.TestImage;
import dev.drover.image.TestRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The oci driver end to end on this node: an image from a real registry, run by the real runc under supervision. */
class OciDriverTest {

    @TempDir
    static Path shared;

    @TempDir
    Path dir;

    private static TestRegistry registry;
    private static String image;

    private final LogRotator rotator = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
    private OciDriver driver;

    @BeforeAll
    static void registry() throws Exception {
        registry = TestRegistry.start(Files.createDirectory(shared.resolve("registry")), TestRegistry.Auth.NONE);
        registry.push(
                "apps/shell",
                "1",
                TestImage.of(
                        Map.of(
                                "Entrypoint",
                                List.of("/bin/sh", "-c"),
                                "Cmd",
                                List.of("echo from the image"),
                                "Env",
                                List.of("GREETING=hello", "PATH=/bin"),
                                "WorkingDir",
                                "/srv"),
                        false,
                        new TestImage.Layer(TestImage.Compression.GZIP)
                                .busybox()
                                .dir("srv", 0755)
                                .dir("etc", 0755)
                                .file("etc/passwd", "root:x:0:0::/:/bin/sh\napp:x:1234:2345::/srv:/bin/sh\n", 0644)
                                .file("etc/group", "root:x:0:\napp:x:2345:\nextra:x:3456:app\n", 0644)));
        image = registry.host() + "/apps/shell:1";
    }

    @AfterAll
    static void stop() throws Exception {
        registry.close();
    }

    private OciDriver driver() throws Exception {
        if (driver == null) {
            ImageStore store = new ImageStore(
                    dir.resolve("images"),
                    new RegistryClient(registry.tls(), Duration.ofSeconds(10), InstantSource.system()),
                    Platform.node(),
                    256L * 1024 * 1024,
                    InstantSource.system());
            driver = new OciDriver(
                    Clock.systemUTC(),
                    rotator,
                    List.of(),
                    TaskCgroups.none(),
                    Optional.empty(),
                    store,
                    RuncContainerTest.RUNC,
                    new OciDriver.OciSettings(
                            false, false, Optional.empty(), new CdiRegistry(List.of(dir.resolve("cdi")), Set.of())));
        }
        return driver;
    }

    @AfterEach
    void close() {
        if (driver != null) {
            driver.close();
        }
        rotator.close();
    }

    private TaskConfig task(String name, Map<String, Object> config, String user) throws Exception {
        Path alloc = Files.createDirectories(dir.resolve("alloc"));
        Path taskDir = dir.resolve(name);
        for (String sub : List.of("local", "secrets", "tmp")) {
            Files.createDirectories(taskDir.resolve(sub));
        }
        Files.createDirectories(alloc.resolve("logs"));
        Map<String, Object> c = new HashMap<>(config);
        c.putIfAbsent("image", image);
        return new TaskConfig(
                "default",
                "web",
                name,
                c,
                Map.of(
                        "DROVER_ALLOC_DIR",
                        alloc.toString(),
                        "DROVER_SECRETS_DIR",
                        taskDir.resolve("secrets").toString()),
                alloc,
                taskDir,
                alloc.resolve("logs"),
                taskDir.resolve("secrets"),
                null,
                user);
    }

    private ExitResult run(TaskConfig t) throws Exception {
        TaskHandle h = driver().start(t);
        try {
            return driver().exit(h).get(30, TimeUnit.SECONDS);
        } finally {
            driver().destroy(h);
        }
    }

    private static String stdout(TaskConfig t) throws Exception {
        return Files.readString(t.stdout());
    }

    @Test
    void theImagesProcessRunsWithItsEnvironmentInItsWorkingDirectory() throws Exception {
        TaskConfig t =
                task("plain", Map.of("args", List.of("echo $GREETING; pwd; echo dir=$DROVER_ALLOC_DIR; exit 3")), null);
        assertThat(run(t)).isEqualTo(ExitResult.code(3));
        assertThat(stdout(t)).isEqualTo("hello\n/srv\ndir=/alloc\n");
    }

    @Test
    void commandAndArgsReplaceTheEntrypointAndCmdAsInKubernetes() throws Exception {
        TaskConfig t = task("cmd", Map.of("command", "/bin/echo", "args", List.of("replaced")), null);
        assertThat(run(t)).isEqualTo(ExitResult.code(0));
        assertThat(stdout(t)).isEqualTo("replaced\n");
    }

    @Test
    void theTaskUserIsLookedUpInTheImageAndTheAllocationDirectoriesAreMounted() throws Exception {
        TaskConfig t = task(
                "user", Map.of("args", List.of("id; echo shared > /alloc/data-from-task; ls /local /secrets")), "app");
        Files.setPosixFilePermissions(
                t.allocDir(), java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThat(run(t)).as(stdout(t)).isEqualTo(ExitResult.code(0));
        assertThat(stdout(t)).startsWith("uid=1234(app) gid=2345(app) groups=2345(app),3456(extra)");
        assertThat(dir.resolve("alloc/data-from-task")).hasContent("shared");
    }

    @Test
    void aContainerWritesToItsOwnLayerAndTheNextStartBeginsFromTheImageAgain() throws Exception {
        TaskConfig first =
                task("fresh", Map.of("args", List.of("ls /marker 2>/dev/null; touch /marker; echo done")), null);
        assertThat(run(first)).isEqualTo(ExitResult.code(0));
        TaskConfig second = task("fresh", Map.of("args", List.of("ls /marker 2>&1; true")), null);
        Files.delete(second.stdout());
        assertThat(run(second)).isEqualTo(ExitResult.code(0));
        assertThat(stdout(second)).contains("No such file");
    }

    @Test
    void aStopEndsTheContainerAndLeavesNothingMounted() throws Exception {
        TaskConfig t = task(
                "long", Map.of("args", List.of("trap 'echo term; exit 0' TERM; while true; do sleep 1; done")), null);
        TaskHandle h = driver().start(t);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> Files.readString(t.stdout()).isEmpty()
                        && Files.exists(t.taskDir().resolve(OciDriver.BUNDLE).resolve("upper")));
        Thread.sleep(500);
        driver().stop(h, Duration.ofSeconds(10), "SIGTERM");
        assertThat(driver().exit(h).get(20, TimeUnit.SECONDS).exitCode()).isEqualTo(0);
        driver().destroy(h);
        assertThat(Files.readString(Path.of("/proc/self/mountinfo")))
                .doesNotContain(t.taskDir().toString());
        assertThat(t.taskDir().resolve(OciDriver.BUNDLE)).doesNotExist();
    }

    @Test
    void aPullIsToldAsTaskEventsAndAPreparedImageIsStartedWithoutAskingAgain() throws Exception {
        List<DriverEvent> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        TaskConfig t = task("told", Map.of("args", List.of("true")), null).withEvents(told::add);
        driver().prepare(t);
        assertThat(told)
                .extracting(DriverEvent::kind)
                .containsExactly(DriverEvent.Kind.DOWNLOADING, DriverEvent.Kind.DOWNLOADED);
        assertThat(told.get(0).message()).startsWith("Downloading image " + image + " (");
        assertThat(told.get(1).message()).startsWith("Downloaded image " + image + ": ");
        told.clear();
        assertThat(run(t)).isEqualTo(ExitResult.code(0));
        assertThat(told).as("the start runs the prepared image").isEmpty();
        assertThat(run(t)).isEqualTo(ExitResult.code(0));
        assertThat(told).extracting(DriverEvent::message).containsExactly("Image " + image + " is already on the node");
        told.clear();
        TaskConfig missing = task("missing", Map.of("image", registry.host() + "/apps/none:1"), null)
                .withEvents(told::add);
        assertThatThrownBy(() -> driver().prepare(missing)).isInstanceOf(DriverStartException.class);
        assertThat(told).extracting(DriverEvent::kind).containsExactly(DriverEvent.Kind.PULL_FAILED);
        assertThat(told.getFirst().message()).contains("answered 404").contains("MANIFEST_UNKNOWN");
    }

    @Test
    void aCommandRunsInsideTheContainerAsItsUserSeeingItsProcessesAndFiles() throws Exception {
        TaskConfig t = task("inside", Map.of("args", List.of("echo ready; exec sleep 60")), "app");
        TaskHandle h = driver().start(t);
        try {
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> Files.readString(t.stdout()).contains("ready"));
            try (var p = driver().exec(
                            h,
                            new ExecRequest(
                                    List.of(
                                            "sh",
                                            "-c",
                                            "id -u; cat /proc/1/comm; pwd; echo $GREETING; read line; echo got $line"),
                                    true,
                                    false))) {
                p.stdin().write("hello\n".getBytes());
                p.stdin().close();
                String out = new String(p.stdout().readAllBytes());
                assertThat(p.exit().get(20, TimeUnit.SECONDS)).as(out).isZero();
                assertThat(out).isEqualTo("1234\nsleep\n/srv\nhello\ngot hello\n");
            }
        } finally {
            driver().stop(h, Duration.ofSeconds(5), "SIGTERM");
            driver().destroy(h);
        }
    }

    @Test
    void aCommandOnATerminalSeesOneOfTheSizeAskedThatFollowsResizesAndEndsWithItsCode() throws Exception {
        TaskConfig t = task("terminal", Map.of("args", List.of("echo ready; exec sleep 60")), "app");
        TaskHandle h = driver().start(t);
        try {
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> Files.readString(t.stdout()).contains("ready"));
            try (ExecProcess p = driver().exec(
                            h,
                            new ExecRequest(
                                    List.of(
                                            "sh",
                                            "-c",
                                            "test -t 0 && test -t 1 && echo tty > /dev/tty; echo $TERM; busybox stty -echo; echo ready;"
                                                    + " while read line; do busybox stty size; done; exit 3"),
                                    true,
                                    true))) {
                p.resize(100, 30);
                assertThat(readUntil(p.stdout(), "ready\n")).isEqualTo("tty\nxterm\nready\n");
                assertThat(p.stderr().read()).as("all on the terminal").isEqualTo(-1);
                shownSize(p, "30 100");
                p.resize(132, 43);
                shownSize(p, "43 132");
                p.stdin().close(); // Ctrl-D: the end of the command's input

                assertThat(p.exit().get(20, TimeUnit.SECONDS)).isEqualTo(3);
            }
        } finally {
            driver().stop(h, Duration.ofSeconds(5), "SIGTERM");
            driver().destroy(h);
        }
    }

    @Test
    void onATerminalTheEndOfInputAndCtrlCReachTheCommandAndClosingEndsAllItStarted() throws Exception {
        TaskConfig t = task("ended", Map.of("args", List.of("echo ready; exec sleep 60")), null);
        TaskHandle h = driver().start(t);
        try {
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> Files.readString(t.stdout()).contains("ready"));
            try (ExecProcess p =
                    driver().exec(h, new ExecRequest(List.of("sh", "-c", "read x || echo no input"), false, true))) {
                assertThat(readUntil(p.stdout(), "no input\n")).isEqualTo("no input\n");
                assertThat(p.exit().get(20, TimeUnit.SECONDS)).isZero();
            }

            try (ExecProcess p = driver().exec(
                            h,
                            new ExecRequest(
                                    List.of("sh", "-c", "trap 'echo interrupted; exit 5' INT; echo ready; read x"),
                                    true,
                                    true))) {
                readUntil(p.stdout(), "ready\n");
                p.stdin().write(3); // Ctrl-C, a SIGINT for what runs in the foreground on the command's terminal
                p.stdin().flush();
                assertThat(readUntil(p.stdout(), "interrupted\n")).isEqualTo("^Cinterrupted\n");
                assertThat(p.exit().get(20, TimeUnit.SECONDS)).isEqualTo(5);
            }

            ExecProcess p = driver().exec(
                            h, new ExecRequest(List.of("sh", "-c", "sleep 300 & echo started; sleep 301"), true, true));
            assertThat(readUntil(p.stdout(), "started\n")).isEqualTo("started\n");
            p.close();

            assertThat(p.exit().get(20, TimeUnit.SECONDS)).isEqualTo(137);
            try (ExecProcess ps = driver().exec(
                            h,
                            new ExecRequest(
                                    List.of("sh", "-c", "cat /proc/[0-9]*/stat | busybox grep -c '(sleep) [^Z]'"),
                                    false,
                                    false))) {
                assertThat(new String(ps.stdout().readAllBytes(), StandardCharsets.UTF_8))
                        .as(
                                "the task's own sleep alone (its sleeps are dead; the task's, its init, does not reap them)")
                        .isEqualTo("1\n");
            }
            assertThat(driver().exit(h)).as("the task lives on").isNotDone();
        } finally {
            driver().stop(h, Duration.ofSeconds(5), "SIGTERM");
            driver().destroy(h);
        }
    }

    /** What the terminal shows up to and with {@code end}, without the carriage returns a terminal may add. */
    private static String readUntil(InputStream in, String end) throws IOException {
        StringBuilder shown = new StringBuilder();
        while (!shown.toString().endsWith(end)) {
            int b = in.read();
            assertThat(b).as("shown so far: %s", shown).isNotNegative();
            if (b != '\r') {
                shown.append((char) b);
            }
        }
        return shown.toString();
    }

    /** Asks the command for its terminal's size until it shows {@code size}: the runtime passes a resize on. */
    private static void shownSize(ExecProcess p, String size) {
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    p.stdin().write('\n');
                    p.stdin().flush();
                    return readUntil(p.stdout(), "\n").equals(size + "\n");
                });
    }

    @Test
    void aTaskReservingAFakeGpuSeesItsDeviceNodeAndTheVariablesOfItsCdiSpec() throws Exception {
        FakeDevicePlugin gpus = new FakeDevicePlugin(PluginClock.system(), Instant.now());
        gpus.configure(FakeDeviceFileParser.parse("""
                groups:
                  - vendor: nvidia
                    type: gpu
                    model: Tesla T4
                    instances:
                      - id: GPU-a
                      - id: GPU-b
                """, "gpus.yaml"));
        gpus.writeCdiSpec(dir.resolve("cdi"));
        TaskAttachments.Builder lent = new TaskAttachments.Builder();
        gpus.reserve(List.of("GPU-b")).cdiDevices().forEach(lent::cdiDevice);
        gpus.close();
        TaskConfig t = task(
                        "gpu",
                        Map.of(
                                "args",
                                List.of("test -c /dev/fake-gpu1 && echo node; echo $FAKE_GPU_1 $DROVER_FAKE_CDI;"
                                        + " echo x > /dev/fake-gpu1 && echo written; test -e /dev/fake-gpu0 || echo"
                                        + " not GPU-a")),
                        "app")
                .withAttachments(lent.build());
        assertThat(run(t)).as(stdout(t)).isEqualTo(ExitResult.code(0));
        assertThat(stdout(t)).isEqualTo("node\nGPU-b 1\nwritten\nnot GPU-a\n");

        TaskConfig unknown = task("nospec", Map.of("args", List.of("true")), null)
                .withAttachments(new TaskAttachments.Builder()
                        .cdiDevice("nvidia.com/gpu=GPU-z")
                        .build());
        assertThatThrownBy(() -> driver().start(unknown))
                .isInstanceOf(DriverStartException.class)
                .hasMessageContaining(
                        "unknown CDI device \"nvidia.com/gpu=GPU-z\": no spec file in " + dir.resolve("cdi"));
    }

    @Test
    void aWritableVolumeTakesTheContainersWritesAndAReadOnlyOneRefusesThem() throws Exception {
        Path shared = Files.createDirectories(dir.resolve("volumes/shared"));
        Path reference = Files.createDirectories(dir.resolve("volumes/reference"));
        Files.writeString(reference.resolve("data.txt"), "kept");
        for (Path p : List.of(shared, reference)) {
            Files.setPosixFilePermissions(p, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        }
        Map<String, Object> config = Map.of(
                "image",
                image,
                "args",
                List.of(
                        "echo written > /srv/shared/out && cat /mnt/ref/data.txt && echo"
                                + " && (echo no > /mnt/ref/data.txt) 2>&1; cat /mnt/ref/data.txt; grep -E ' /(srv|mnt)' /proc/mounts"),
                "volumeMounts",
                List.of(
                        Map.of("volume", "shared", "destination", "/srv/shared"),
                        Map.of("volume", "reference", "destination", "/mnt/ref", "readOnly", true)));
        assertThat(driver().validate(config)).isEmpty();
        TaskConfig t = task("volumes", config, "app")
                .withAttachments(new TaskAttachments.Builder()
                        .mount(new TaskMount(shared, "/srv/shared", false))
                        .mount(new TaskMount(reference, "/mnt/ref", true))
                        .build());

        run(t);

        assertThat(shared.resolve("out")).hasContent("written");
        assertThat(reference.resolve("data.txt")).hasContent("kept");
        assertThat(stdout(t))
                .startsWith("kept\n")
                .contains("Read-only file system")
                .contains("/srv/shared")
                .containsPattern("/mnt/ref \\S+ ro,nosuid,nodev");
    }

    @Test
    void volumeMountsAreRefusedOverDroversDirectoriesAndTheKernelsFiles() throws Exception {
        assertThat(driver().validate(Map.of(
                        "image",
                        image,
                        "volumeMounts",
                        List.of(
                                Map.of("volume", "a", "destination", "/secrets"),
                                Map.of("volume", "a", "destination", "/proc/sys"),
                                Map.of("volume", "a", "destination", "/"),
                                Map.of("volume", "a", "destination", "/data/../etc"),
                                Map.of("volume", "a", "destination", "/data"),
                                Map.of("volume", "b", "destination", "/data"),
                                Map.of("volume", "a", "destination", "/var/lib/x", "readOnly", "yes")))))
                .containsExactly(
                        "config.volumeMounts[0].destination: \"/secrets\" would cover /secrets, which Drover gives the"
                                + " task itself",
                        "config.volumeMounts[1].destination: \"/proc/sys\" is inside /proc, where no volume may go",
                        "config.volumeMounts[2].destination: \"/\" would cover the whole file system; mount the volume"
                                + " on a directory",
                        "config.volumeMounts[3].destination: \"/data/../etc\" is not a clean path (no '.', '..', '//'"
                                + " or trailing '/')",
                        "config.volumeMounts[5].destination: \"/data\" is mounted by another entry; each destination"
                                + " takes one volume",
                        "config.volumeMounts[6].readOnly: \"yes\" is not true or false");
    }

    @Test
    void aBadConfigIsRefusedNamingItsKeys() throws Exception {
        assertThat(driver().validate(Map.of(
                        "image",
                        "Bad Image",
                        "seccompProfile",
                        "Unconfined",
                        "privileged",
                        true,
                        "capAdd",
                        List.of("FLY"),
                        "shmSizeMB",
                        0)))
                .anySatisfy(p -> assertThat(p).startsWith("config.image:"))
                .anySatisfy(p -> assertThat(p).contains("Unconfined is not allowed on this node"))
                .anySatisfy(p -> assertThat(p).contains("privileged containers are not allowed"))
                .anySatisfy(p -> assertThat(p).contains("\"FLY\" is not a Linux capability"))
                .anySatisfy(p -> assertThat(p).startsWith("config.shmSizeMB:"));
        assertThatThrownBy(() -> driver().start(task(
                        "never", Map.of("image", registry.host() + "/apps/none:1", "pullPolicy", "Never"), null)))
                .isInstanceOf(DriverStartException.class)
                .hasMessageContaining("is not on this node, and its pullPolicy is Never");
    }

    @Test
    void aPrivateImageIsPulledWithTheFirstLentSecretThatNamesItsRegistry() throws Exception {
        try (TestRegistry locked =
                        TestRegistry.start(Files.createDirectory(dir.resolve("locked")), TestRegistry.Auth.HTPASSWD);
                RegistryClient client =
                        new RegistryClient(locked.tls(), Duration.ofSeconds(10), InstantSource.system())) {
            locked.push(
                    "private/shell",
                    "1",
                    TestImage.of(
                            Map.of("Entrypoint", List.of("/bin/sh")),
                            false,
                            new TestImage.Layer(TestImage.Compression.GZIP).busybox()));
            OciDriver privateDriver = new OciDriver(
                    Clock.systemUTC(),
                    rotator,
                    List.of(),
                    TaskCgroups.none(),
                    Optional.empty(),
                    new ImageStore(
                            dir.resolve("private-images"),
                            client,
                            Platform.node(),
                            256L * 1024 * 1024,
                            InstantSource.system()),
                    RuncContainerTest.RUNC,
                    new OciDriver.OciSettings(
                            false, false, Optional.empty(), new CdiRegistry(List.of(dir.resolve("cdi")), Set.of())));
            try {
                TaskConfig plain = task("private", Map.of("image", locked.host() + "/private/shell:1"), null);
                List<DriverEvent> told = new java.util.concurrent.CopyOnWriteArrayList<>();
                assertThatThrownBy(() -> privateDriver.prepare(plain.withEvents(told::add)))
                        .isInstanceOf(DriverStartException.class)
                        .hasMessageContaining("asks for credentials")
                        .hasMessageContaining("spec.imagePullSecrets");
                assertThat(told).extracting(DriverEvent::kind).containsExactly(DriverEvent.Kind.PULL_FAILED);

                TaskAttachments lent = new TaskAttachments.Builder()
                        .registryConfig(new String(
                                TestRegistry.dockerConfig("other.example.com", "someone", "else"),
                                StandardCharsets.UTF_8))
                        .registryConfig(new String(
                                TestRegistry.dockerConfig(locked.host(), TestRegistry.USER, TestRegistry.PASSWORD),
                                StandardCharsets.UTF_8))
                        .build();
                told.clear();
                privateDriver.prepare(plain.withAttachments(lent).withEvents(told::add));
                assertThat(told)
                        .extracting(DriverEvent::kind)
                        .containsExactly(DriverEvent.Kind.DOWNLOADING, DriverEvent.Kind.DOWNLOADED);
            } finally {
                privateDriver.close();
            }
        }
    }
}
