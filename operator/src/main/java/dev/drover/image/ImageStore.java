package dev.drover.image;

import dev.drover.fs.TreeRemover;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's images, content-addressed and shared by every allocation, under the agent's data directory
 * ({@code images/}, {@code 0700}). An image is kept by the digest of its platform's manifest: its root filesystem,
 * every layer applied in order ({@link LayerUnpacker}), its config and manifest; a reference ({@code r.io/app:1.0})
 * names the manifest it last resolved to. A pull of an image another pull is fetching waits for that one; each blob
 * is checked against its digest before it is unpacked, each unpacked layer against its config's diff ID, and an image
 * is in the store only once all of it is (it is built aside and moved in).
 */
public final class ImageStore {

    private static final Logger LOG = LoggerFactory.getLogger(ImageStore.class);

    private static final String IMAGES = "images";
    private static final String REFS = "refs";
    private static final String TMP = "tmp";
    private static final String SIZE = "size";

    /** An image on the node: its manifest's digest, its root filesystem (read-only to tasks) and its config. */
    /**
     * An image the store holds.
     *
     * @param bytes what its layers' files held together as they were unpacked (files later replaced included): at
     *     least what its root filesystem holds, and at most the image size bound
     */
    public record Image(Digest manifest, Path rootfs, ImageConfig config, long bytes) {}

    private final Path dir;
    private final RegistryClient registries;
    private final Platform platform;
    private final long maxImageBytes;
    private final InstantSource clock;
    private final Map<String, List<String>> mirrors;
    private final ConcurrentMap<Digest, CompletableFuture<Image>> pulling = new ConcurrentHashMap<>();
    /** Images tasks use, with how many use each: never collected. Guarded by {@code this}. */
    private final Map<Digest, Integer> retained = new HashMap<>();

    private final ImageMetrics metrics = new ImageMetrics(this::totals);

    /** @param maxImageBytes what one image may hold, compressed and unpacked alike */
    public ImageStore(Path dir, RegistryClient registries, Platform platform, long maxImageBytes, InstantSource clock)
            throws IOException {
        this(dir, registries, platform, maxImageBytes, clock, Map.of());
    }

    /** @param mirrors hosts tried, in order, before each registry ({@code docker.io: [mirror.local:5000]}) */
    public ImageStore(
            Path dir,
            RegistryClient registries,
            Platform platform,
            long maxImageBytes,
            InstantSource clock,
            Map<String, List<String>> mirrors)
            throws IOException {
        this.mirrors = Map.copyOf(mirrors);
        this.dir = dir;
        this.registries = registries;
        this.platform = platform;
        this.maxImageBytes = maxImageBytes;
        this.clock = clock;
        for (String sub : List.of("", IMAGES, REFS, TMP)) {
            Path p = dir.resolve(sub);
            Files.createDirectories(p);
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
        }
        sweepTmp();
    }

    /**
     * The image {@code ref} names, pulled as {@code policy} says: {@code Never} only looks on the node,
     * {@code IfNotPresent} asks the registry only when the node has nothing for the reference, {@code Always} asks
     * what the reference names now and fetches it if the node does not have it. The image is retained for the caller
     * (the garbage collector leaves it) until {@link #release}d.
     */
    public Image pull(ImageReference ref, PullPolicy policy, Optional<RegistryCredentials> creds, PullListener told)
            throws IOException, InterruptedException {
        PullListener listener = metrics.observing(told);
        Optional<Image> cached = policy == PullPolicy.Always ? Optional.empty() : cached(ref);
        if (cached.isPresent() && retain(cached.get().manifest())) {
            listener.downloaded(ref, 0, Duration.ZERO, true);
            return cached.get();
        }
        if (policy == PullPolicy.Never) {
            throw new ImagePullException("image " + ref + " is not on this node, and its pullPolicy is Never");
        }
        long started = System.nanoTime();
        List<String> hosts = new ArrayList<>(mirrors.getOrDefault(ref.registry(), List.of()));
        hosts.add(ref.apiHost());
        for (int i = 0; ; i++) {
            String host = hosts.get(i);
            boolean mirror = i < hosts.size() - 1;
            try {
                return pullFrom(host, ref, mirror ? Optional.empty() : creds, listener, started);
            } catch (IOException e) {
                if (!mirror) {
                    throw e;
                }
                LOG.info("image {}: mirror {} failed ({}); trying the next", ref, host, e.getMessage());
            }
        }
    }

    /** Resolves {@code ref} at {@code host} (the registry or a mirror of it) and fetches what the node lacks. */
    private Image pullFrom(
            String host, ImageReference ref, Optional<RegistryCredentials> creds, PullListener listener, long started)
            throws IOException, InterruptedException {
        RegistryClient.Fetched top = registries.manifest(host, ref, ref.manifestReference(), creds);
        RegistryClient.Fetched manifest = top;
        if (Manifests.isIndex(top.mediaType())) {
            Descriptor mine = Manifests.forPlatform(top.body(), platform)
                    .orElseThrow(() -> new ImagePullException(noPlatform(ref, top.body())));
            manifest = registries.manifest(host, ref, mine.digest().toString(), creds);
        }
        Digest digest = manifest.digest();
        Optional<Image> have = stored(digest);
        if (have.isPresent() && retain(digest)) {
            listener.downloaded(ref, 0, Duration.ofNanos(System.nanoTime() - started), true);
        } else {
            have = Optional.of(fetchOnce(ref, host, manifest, creds, listener, started));
            if (!retain(digest)) {
                throw new ImagePullException("image " + ref + " was collected as it was pulled; try again");
            }
        }
        remember(ref, digest);
        return have.get();
    }

    /**
     * Keeps the image {@code manifest} from the garbage collector for one more user (a task restored after an agent
     * restart says so again); false when the node no longer holds it.
     */
    public synchronized boolean retain(Digest manifest) {
        if (!Files.isDirectory(dir.resolve(IMAGES).resolve(manifest.hex()))) {
            return false;
        }
        retained.merge(manifest, 1, Integer::sum);
        return true;
    }

    /** The image {@code manifest}, retained for the caller as {@link #retain} does; empty when the node lacks it. */
    public synchronized Optional<Image> hold(Digest manifest) throws IOException {
        Optional<Image> image = stored(manifest);
        if (image.isPresent()) {
            retained.merge(manifest, 1, Integer::sum);
        }
        return image;
    }

    /** One user of {@code manifest} is done with it. */
    public synchronized void release(Digest manifest) {
        retained.computeIfPresent(manifest, (d, n) -> n > 1 ? n - 1 : null);
    }

    /** An image the node holds: when a task last used it, and what its root filesystem holds. */
    record Stored(Digest manifest, java.time.Instant lastUsed, long bytes) {}

    /** The images the node holds. */
    List<Stored> list() throws IOException {
        List<Stored> out = new ArrayList<>();
        try (var images = Files.list(dir.resolve(IMAGES))) {
            for (Path p : images.toList()) {
                Digest d;
                try {
                    d = new Digest(p.getFileName().toString());
                } catch (IllegalArgumentException notOurs) {
                    continue;
                }
                long bytes = Files.isRegularFile(p.resolve(SIZE))
                        ? Long.parseLong(Files.readString(p.resolve(SIZE)).strip())
                        : 0;
                out.add(new Stored(d, Files.getLastModifiedTime(p).toInstant(), bytes));
            }
        }
        return out;
    }

    /** How many images the node holds, and what their root file systems hold. */
    private long[] totals() throws IOException {
        long bytes = 0;
        List<Stored> all = list();
        for (Stored s : all) {
            bytes += s.bytes();
        }
        return new long[] {all.size(), bytes};
    }

    /** Removes the image {@code manifest} unless a task uses it; returns whether it did. */
    boolean removeUnused(Digest manifest) throws IOException {
        Path gone = dir.resolve(TMP).resolve("collected-" + manifest.hex());
        synchronized (this) {
            if (retained.containsKey(manifest)) {
                return false;
            }
            Path at = dir.resolve(IMAGES).resolve(manifest.hex());
            if (!Files.isDirectory(at)) {
                return false;
            }
            Files.move(at, gone, StandardCopyOption.ATOMIC_MOVE); // out of reach of pulls before it is removed
        }
        removeTree(gone);
        return true;
    }

    /** The store's series, to register where the agent's metrics are served. */
    public ImageMetrics metrics() {
        return metrics;
    }

    /** The store's directory, for the file system it is on. */
    Path directory() {
        return dir;
    }

    /** The image the node holds for {@code ref} (the manifest it last resolved to), if it holds one. */
    public Optional<Image> cached(ImageReference ref) throws IOException {
        if (ref.digest() != null) {
            Optional<Image> byDigest = stored(ref.digest());
            if (byDigest.isPresent()) {
                return byDigest;
            }
        }
        Path file = dir.resolve(REFS)
                .resolve(Digest.of(ref.toString().getBytes(StandardCharsets.UTF_8))
                        .hex());
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        String[] lines = Files.readString(file).split("\n", 2);
        try {
            return stored(Digest.parse(lines[0]));
        } catch (IllegalArgumentException damaged) {
            return Optional.empty();
        }
    }

    private Image fetchOnce(
            ImageReference ref,
            String host,
            RegistryClient.Fetched manifest,
            Optional<RegistryCredentials> creds,
            PullListener listener,
            long started)
            throws IOException, InterruptedException {
        CompletableFuture<Image> mine = new CompletableFuture<>();
        CompletableFuture<Image> running = pulling.putIfAbsent(manifest.digest(), mine);
        if (running != null) {
            Image image = join(running);
            listener.downloaded(ref, 0, Duration.ofNanos(System.nanoTime() - started), true);
            return image;
        }
        try {
            Image image = fetch(ref, host, manifest, creds, listener, started);
            mine.complete(image);
            return image;
        } catch (IOException | InterruptedException | RuntimeException e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            pulling.remove(manifest.digest(), mine);
        }
    }

    private Image fetch(
            ImageReference ref,
            String host,
            RegistryClient.Fetched fetched,
            Optional<RegistryCredentials> creds,
            PullListener listener,
            long started)
            throws IOException, InterruptedException {
        Manifests.Image manifest = Manifests.image(fetched.body());
        long total = manifest.config().size();
        for (Descriptor l : manifest.layers()) {
            total += l.size();
        }
        if (manifest.config().size() > ImageConfig.MAX_BYTES || total > maxImageBytes) {
            throw new ImagePullException("image " + ref + " is " + total / (1024 * 1024) + " MB, more than this"
                    + " node's bound of " + maxImageBytes / (1024 * 1024) + " MB");
        }
        Path work =
                Files.createDirectory(dir.resolve(TMP).resolve(UUID.randomUUID().toString()));
        try {
            long[] done = {0};
            long all = total;
            Path configFile = work.resolve("config.json");
            registries.blob(host, ref, manifest.config(), creds, configFile, n -> {});
            done[0] += manifest.config().size();
            ImageConfig config = ImageConfig.parse(Files.readAllBytes(configFile));
            if (config.diffIds().size() != manifest.layers().size()) {
                throw new ImagePullException(
                        "image " + ref + " has " + manifest.layers().size() + " layers but its" + " config lists "
                                + config.diffIds().size());
            }
            Path rootfs = Files.createDirectory(work.resolve("rootfs"));
            LayerUnpacker unpacker = new LayerUnpacker(rootfs, maxImageBytes);
            for (int i = 0; i < manifest.layers().size(); i++) {
                Descriptor layer = manifest.layers().get(i);
                Path blob = work.resolve("layer");
                long before = done[0];
                registries.blob(host, ref, layer, creds, blob, n -> listener.downloading(ref, before + n, all));
                done[0] += layer.size();
                unpacker.applyBlob(blob, layer, config.diffIds().get(i), "layer " + layer.digest() + " of " + ref);
                Files.delete(blob);
            }
            Files.write(work.resolve("manifest.json"), fetched.body());
            Files.writeString(work.resolve(SIZE), Long.toString(maxImageBytes - unpacker.left()));
            Path target = dir.resolve(IMAGES).resolve(fetched.digest().hex());
            try {
                Files.move(work, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException | java.nio.file.DirectoryNotEmptyException another) {
                // stored meanwhile by an agent before this one (a restart mid-pull): it is the same content
            }
            listener.downloaded(ref, done[0], Duration.ofNanos(System.nanoTime() - started), false);
            return stored(fetched.digest())
                    .orElseThrow(() -> new IOException("image " + ref + " vanished from the store as it was stored"));
        } finally {
            if (Files.exists(work)) {
                removeTree(work);
            }
        }
    }

    private Optional<Image> stored(Digest manifest) throws IOException {
        Path at = dir.resolve(IMAGES).resolve(manifest.hex());
        Path config = at.resolve("config.json");
        if (!Files.isRegularFile(config)) {
            return Optional.empty();
        }
        try {
            Files.setLastModifiedTime(at, FileTime.from(clock.instant())); // last use, for garbage collection
            return Optional.of(new Image(
                    manifest, at.resolve("rootfs"), ImageConfig.parse(Files.readAllBytes(config)), bytes(at)));
        } catch (NoSuchFileException collected) {
            return Optional.empty();
        }
    }

    /** What the image at {@code at} unpacked to, as its pull noted; the size bound where it is not noted. */
    private long bytes(Path at) throws IOException {
        Path size = at.resolve(SIZE);
        try {
            return Long.parseLong(Files.readString(size).strip());
        } catch (NoSuchFileException | NumberFormatException unnoted) {
            return maxImageBytes;
        }
    }

    private void remember(ImageReference ref, Digest manifest) throws IOException {
        Path refs = dir.resolve(REFS);
        Path next = refs.resolve(UUID.randomUUID() + ".new");
        Files.writeString(next, manifest + "\n" + ref + "\n");
        try {
            Files.move(
                    next,
                    refs.resolve(Digest.of(ref.toString().getBytes(StandardCharsets.UTF_8))
                            .hex()),
                    StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.deleteIfExists(next);
            throw e;
        }
    }

    /** What a pull left unfinished (an agent stopped mid-pull) goes. */
    private void sweepTmp() throws IOException {
        try (var left = Files.list(dir.resolve(TMP))) {
            for (Path p : left.toList()) {
                removeTree(p);
            }
        }
    }

    private static void removeTree(Path p) throws IOException {
        TreeRemover.remove(p, LayerUnpacker.MAX_ENTRIES, LayerUnpacker.REMOVE_DEPTH);
    }

    private static Image join(CompletableFuture<Image> running) throws IOException, InterruptedException {
        try {
            return running.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw new ImagePullException(io.getMessage(), io);
            }
            throw new ImagePullException("pulling failed: " + e.getCause(), e.getCause());
        }
    }

    private String noPlatform(ImageReference ref, byte[] index) {
        String listed;
        try {
            listed = String.join(", ", Manifests.platforms(index));
        } catch (IOException e) {
            listed = "none readable";
        }
        return "image " + ref + " has no manifest for this node's platform (" + platform + "); it has " + listed;
    }
}
