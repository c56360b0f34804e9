package dev.drover.driver.oci;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.common.UserText;
import dev.drover.devices.cdi.CdiRegistry;
import dev.drover.devices.cdi.ContainerEdits;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverEvent;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.driver.TaskStats;
import dev.drover.driver.host.HostCommand;
import dev.drover.driver.host.HostProcessDriver;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.fs.TreeRemover;
import dev.drover.image.Digest;
import dev.drover.image.DockerConfig;
import dev.drover.image.ImagePullException;
import dev.drover.image.ImageReference;
import dev.drover.image.ImageStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code oci} driver: a task runs an OCI or Docker image, pulled into the node's {@link ImageStore}, as a
 * container of a real OCI runtime ({@code runc} or {@code crun}) with the spec Drover writes ({@link OciSpec}). The
 * runtime runs in the foreground under the same supervision as a host process ({@link HostProcessDriver}: the
 * monitor, the task's cgroup, which the container's is below, restore after an agent restart, stop and kill-all,
 * logs, stats), its root file system an overlay of the image with an upper directory of the task's own
 * ({@link OciConfinement}), or a copy of the image's made for each start where the node has no overlays
 * ({@link RootfsCopy}). Inside: {@code /alloc}, {@code /local}, {@code /secrets} (read-only) and a private
 * {@code /tmp}, and the {@code DROVER_*_DIR} variables name those paths.
 */
public final class OciDriver implements Driver {

    public static final String NAME = "oci";
    /** In the task's directory: the container's bundle, its upper directory and the runtime's state. */
    static final String BUNDLE = ".drover-oci";
    /** In a handle: the manifest digest of the image the task runs, held from the garbage collector. */
    static final String IMAGE_KEY = "image";
    /** In a handle: the runtime's name for the container. */
    static final String CONTAINER_KEY = "container";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HostProcessDriver tasks;
    private final ImageStore images;
    private final Path runtime;
    private final OciConfig.Allowed allowed;
    private final Optional<String> missing;
    private final CdiRegistry cdi;
    private final RootfsMode rootfs;
    /** By task id: what {@link #prepare} fetched, for the start that follows. */
    private final Map<String, Prepared> prepared = new ConcurrentHashMap<>();

    /**
     * @param launcher words put before each task's supervisor ({@link HostProcessDriver})
     * @param runtime  the OCI runtime's binary ({@code ociRuntime})
     */
    public OciDriver(
            InstantSource clock,
            LogRotator rotator,
            List<String> launcher,
            TaskCgroups cgroups,
            Optional<Path> monitor,
            ImageStore images,
            Path runtime,
            OciSettings settings) {
        this.tasks = new HostProcessDriver(
                NAME, clock, rotator, launcher, cgroups, new OciConfinement(settings.rootfs()), monitor);
        this.images = images;
        this.runtime = runtime;
        this.allowed = new OciConfig.Allowed(settings.allowPrivileged(), settings.allowUnconfined());
        this.missing = settings.missing();
        this.cdi = settings.cdi();
        this.rootfs = settings.rootfs();
    }

    /** What this agent lacks to run containers, or empty when it can. */
    public Optional<String> missing() {
        return missing;
    }

    /**
     * What the agent lets containers ask for, and what this node lacks to run them.
     *
     * @param missing why no container can run here (no runtime, not root), or empty when they can
     * @param cdi     the CDI specs that give containers their devices ({@link ContainerDevices})
     * @param rootfs  how containers' root filesystems are made from their images
     */
    public record OciSettings(
            boolean allowPrivileged,
            boolean allowUnconfined,
            Optional<String> missing,
            CdiRegistry cdi,
            RootfsMode rootfs) {

        /** With overlays. */
        public OciSettings(
                boolean allowPrivileged, boolean allowUnconfined, Optional<String> missing, CdiRegistry cdi) {
            this(allowPrivileged, allowUnconfined, missing, cdi, RootfsMode.OVERLAY);
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<String> validate(Map<String, Object> config) {
        if (missing.isPresent()) {
            return List.of("the oci driver cannot run containers on this node: " + missing.get());
        }
        List<String> problems = new ArrayList<>();
        OciConfig.read(config, allowed, problems);
        return problems;
    }

    @Override
    public TaskHandle start(TaskConfig task) throws DriverStartException {
        if (missing.isPresent()) {
            throw new DriverStartException(
                    "the oci driver cannot run containers on this node: " + missing.get(), false);
        }
        List<String> problems = new ArrayList<>();
        OciConfig config = OciConfig.read(task.config(), allowed, problems);
        if (!problems.isEmpty()) {
            throw new DriverStartException(String.join("; ", problems), false);
        }
        ContainerEdits devices = ContainerDevices.resolve(task.attachments(), cdi);
        ImageStore.Image image = heldPrepared(task, config);
        boolean copied = image != null; // in copy mode, by the prepare of that image
        if (image == null) {
            image = pull(task, config);
        }
        boolean started = false;
        try {
            Path bundle = bundle(task, config, image, devices, copied);
            String id = containerId(task);
            List<String> args = new ArrayList<>();
            if (rootfs == RootfsMode.OVERLAY) {
                for (Path dir : List.of(image.rootfs(), bundle.resolve("upper"), bundle.resolve("work"))) {
                    args.add(dir.toString());
                }
                args.add(bundle.resolve("rootfs").toString());
            }
            args.addAll(List.of("--root", bundle.resolve("runtime").toString(), "run", "--bundle", bundle.toString()));
            args.add(id);
            TaskHandle handle = tasks.start(task, runtime, args);
            Map<String, String> state = new HashMap<>(handle.state());
            state.put(IMAGE_KEY, image.manifest().toString());
            state.put(CONTAINER_KEY, id);
            started = true;
            return new TaskHandle(handle.driver(), handle.taskId(), handle.startedAt(), state);
        } finally {
            if (!started) {
                images.release(image.manifest());
            }
        }
    }

    /**
     * Fetches the task's image ahead of its start (under the prepare bound, not the start's), and notes which image
     * it resolved to: the start then runs that one, held from the garbage collector, without asking the registry
     * again. In copy mode the copy of its root filesystem is made here too, under the same bound.
     */
    @Override
    public void prepare(TaskConfig task) throws DriverStartException {
        if (missing.isPresent()) {
            return; // the start says why
        }
        List<String> problems = new ArrayList<>();
        OciConfig config = OciConfig.read(task.config(), allowed, problems);
        if (!problems.isEmpty()) {
            return;
        }
        prepared.remove(task.id()); // an earlier prepare's copy is no longer whole
        ImageStore.Image image = pull(task, config);
        try {
            if (rootfs == RootfsMode.COPY) {
                RootfsCopy.prepare(image, task.taskDir());
            }
        } catch (IOException e) {
            throw new DriverStartException("cannot copy the image's root filesystem: " + e.getMessage(), true, e);
        } finally {
            images.release(image.manifest()); // held again, by the start, for the task's life
        }
        prepared.put(task.id(), new Prepared(config.image(), image.manifest()));
    }

    /** An image the task's {@link #prepare} fetched for this reference, held for the task; null when none. */
    private ImageStore.Image heldPrepared(TaskConfig task, OciConfig config) throws DriverStartException {
        Prepared p = prepared.remove(task.id());
        if (p == null || !p.reference().equals(config.image())) {
            return null;
        }
        try {
            return images.hold(p.manifest()).orElse(null);
        } catch (IOException e) {
            return null; // pulled again below
        }
    }

    private ImageStore.Image pull(TaskConfig task, OciConfig config) throws DriverStartException {
        try {
            return images.pull(
                    config.image(),
                    config.pullPolicy(),
                    // the first of the allocation's imagePullSecrets (lent by a prestart hook) naming the registry
                    DockerConfig.first(
                            task.attachments().registryConfigs(), config.image().registry()),
                    new PullEvents(task.events()));
        } catch (IOException e) {
            String why = e instanceof ImagePullException
                    ? e.getMessage()
                    : "pulling " + config.image() + " failed: " + e.getMessage();
            task.events().accept(new DriverEvent(DriverEvent.Kind.PULL_FAILED, UserText.cut(why, 1000)));
            throw new DriverStartException(why, true, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DriverStartException("interrupted while pulling " + config.image(), true, e);
        }
    }

    /** The image a task's prepare resolved its reference to. */
    private record Prepared(ImageReference reference, Digest manifest) {}

    /**
     * Writes the container's bundle in the task's directory: the spec, and a fresh upper layer or copy of the image's
     * root filesystem ({@code copied}: the one the task's prepare made).
     */
    private Path bundle(
            TaskConfig task, OciConfig config, ImageStore.Image image, ContainerEdits devices, boolean copied)
            throws DriverStartException {
        Path bundle = task.taskDir().resolve(BUNDLE);
        ImageUser user = ImageUser.resolve(
                image.rootfs(),
                task.user() != null ? task.user() : image.config().user());
        List<String> argv =
                config.argv(image.config().entrypoint(), image.config().cmd());
        if (argv.isEmpty()) {
            throw new DriverStartException(
                    "image " + config.image() + " has neither Entrypoint nor Cmd, and"
                            + " config.command is not set: there is nothing to run",
                    false);
        }
        String cwd = config.workingDir() != null
                ? config.workingDir()
                : image.config().workingDir().isEmpty() ? "/" : image.config().workingDir();
        OciSpec.Container container = new OciSpec.Container(
                argv,
                ContainerView.environment(image.config().env(), task),
                cwd,
                user.uid(),
                user.gid(),
                user.groups(),
                config.capabilities(),
                config.seccomp(),
                config.privileged(),
                config.readOnlyRootFilesystem(),
                config.shmSizeMB(),
                task.taskName(),
                ContainerView.binds(task),
                "drover-" + containerId(task),
                task.attachments().networkNamespace() == null
                        ? null
                        : task.attachments().networkNamespace().toString());
        ObjectNode spec = OciSpec.of(container, bundle.resolve("rootfs").toString());
        ContainerDevices.apply(spec, devices);
        try {
            if (Files.exists(bundle)) {
                remove(bundle); // a restarted task starts from the image again, as a new container does
            }
            Files.createDirectories(bundle);
            Files.setPosixFilePermissions(bundle, PosixFilePermissions.fromString("rwx------"));
            for (String dir : rootfs == RootfsMode.COPY
                    ? List.of("rootfs", "runtime")
                    : List.of("upper", "work", "rootfs", "runtime")) {
                Files.createDirectory(bundle.resolve(dir));
            }
            Files.writeString(bundle.resolve("config.json"), JSON.writeValueAsString(spec), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new DriverStartException("cannot write the container's bundle: " + e.getMessage(), true, e);
        }
        try {
            if (rootfs == RootfsMode.COPY) {
                RootfsCopy.place(image, task.taskDir(), bundle.resolve("rootfs"), copied);
            }
        } catch (IOException e) {
            throw new DriverStartException("cannot copy the image's root filesystem: " + e.getMessage(), true, e);
        }
        return bundle;
    }

    /** The runtime's name for the task's container: unique on the node, in the runtime's alphabet. */
    static String containerId(TaskConfig task) {
        String hash =
                Digest.of(task.id().getBytes(StandardCharsets.UTF_8)).hex().substring(0, 16);
        return task.taskName() + "-" + hash;
    }

    @Override
    public CompletableFuture<ExitResult> exit(TaskHandle handle) {
        return tasks.exit(handle);
    }

    @Override
    public void stop(TaskHandle handle, Duration timeout, String signal) throws DriverException {
        tasks.stop(handle, timeout, signal);
    }

    @Override
    public void signal(TaskHandle handle, String signal) throws DriverException {
        tasks.signal(handle, signal);
    }

    /**
     * Runs {@code request}'s command inside the running container ({@code runtime exec}): its namespaces, root,
     * capabilities, seccomp profile and cgroup, as its user, in its working directory, with its environment, all as
     * the container's spec gave them. With a terminal, the runtime runs in the foreground on one of the agent's and
     * makes the command's own, which it relays and resizes ({@link HostCommand}).
     */
    @Override
    public ExecProcess exec(TaskHandle handle, ExecRequest request) throws DriverException {
        if (tasks.exit(handle).isDone()) {
            throw new TaskNotRunningException("task " + handle.taskId() + " is not running");
        }
        Path bundle = Path.of(handle.state().getOrDefault("statusDir", "/nonexistent"))
                .getParent()
                .resolve(BUNDLE);
        JsonNode process;
        try {
            process = JSON.readTree(bundle.resolve("config.json").toFile()).path("process");
        } catch (IOException e) {
            throw new DriverException(
                    "task " + handle.taskId() + ": cannot read its container's spec: " + e.getMessage(), e);
        }
        List<String> argv = new ArrayList<>(List.of(
                runtime.toString(),
                "--root",
                bundle.resolve("runtime").toString(),
                "exec",
                "--user",
                process.path("user").path("uid").asLong() + ":"
                        + process.path("user").path("gid").asLong(),
                "--cwd",
                process.path("cwd").asText("/")));
        for (JsonNode g : process.path("user").path("additionalGids")) {
            argv.addAll(List.of("--additional-gids", Long.toString(g.asLong())));
        }
        boolean term = false;
        for (JsonNode e : process.path("env")) {
            argv.addAll(List.of("--env", e.asText()));
            term |= e.asText().startsWith("TERM=");
        }
        if (request.tty()) {
            // in the foreground the runtime makes the command's terminal itself and relays it to the agent's
            argv.add("--tty");
            if (!term) {
                argv.addAll(List.of("--env", "TERM=xterm"));
            }
        }
        argv.add(handle.state().getOrDefault(CONTAINER_KEY, ""));
        argv.addAll(request.command());
        try {
            return HostCommand.start(argv, request);
        } catch (IOException e) {
            throw new DriverException(
                    "cannot run " + request.describe() + " in task " + handle.taskId() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void destroy(TaskHandle handle) {
        tasks.destroy(handle);
        String digest = handle.state().get(IMAGE_KEY);
        if (digest != null) {
            images.release(Digest.parse(digest));
        }
        Path status = Path.of(handle.state().getOrDefault("statusDir", "/nonexistent"));
        Path bundle = status.getParent().resolve(BUNDLE);
        try {
            if (Files.exists(bundle)) {
                remove(bundle);
            }
            RootfsCopy.discard(status.getParent()); // one a prepare made for a start that did not come
        } catch (IOException e) {
            // the task's directory goes with its allocation
        }
    }

    @Override
    public TaskHandle recover(TaskHandle handle) throws DriverException {
        TaskHandle recovered = tasks.recover(handle);
        String digest = handle.state().get(IMAGE_KEY);
        if (digest != null && !images.retain(Digest.parse(digest))) {
            throw new DriverException(
                    "task " + handle.taskId() + ": its image " + UserText.quote(digest) + " is no longer on this node");
        }
        Map<String, String> state = new HashMap<>(recovered.state());
        for (String key : List.of(IMAGE_KEY, CONTAINER_KEY)) {
            if (handle.state().containsKey(key)) {
                state.put(key, handle.state().get(key));
            }
        }
        return new TaskHandle(recovered.driver(), recovered.taskId(), recovered.startedAt(), state);
    }

    @Override
    public TaskStats stats(TaskHandle handle) throws DriverException {
        return tasks.stats(handle);
    }

    @Override
    public void close() {
        tasks.close();
    }

    /** A bundle's upper layer holds what the container wrote: bounded as an image's tree is. */
    private static void remove(Path dir) throws IOException {
        TreeRemover.remove(dir, 1_000_000, 512);
    }
}
