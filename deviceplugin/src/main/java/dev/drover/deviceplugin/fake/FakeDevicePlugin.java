package dev.drover.deviceplugin.fake;

import dev.drover.common.ConfigReader;
import dev.drover.deviceplugin.ChangeSignal;
import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.DevicePlugin;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.deviceplugin.PluginClock;
import dev.drover.deviceplugin.PluginInfo;
import dev.drover.deviceplugin.Reservation;
import dev.drover.deviceplugin.fake.FakeDeviceFile.Call;
import dev.drover.deviceplugin.fake.FakeDeviceFile.Fault;
import dev.drover.deviceplugin.fake.FakeDeviceFile.Group;
import dev.drover.deviceplugin.fake.FakeDeviceFile.HealthWindow;
import dev.drover.deviceplugin.fake.FakeDeviceFile.Instance;
import dev.drover.deviceplugin.nvidia.GpuSelection;
import dev.drover.deviceplugin.nvidia.NvidiaReservations;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Devices read from a file, with scripted faults and health flips (see {@link FakeDeviceFile}). For tests,
 * the local cluster and demos: {@code --device-plugin fake:examples/devices/fake-gpus.yaml}. Its {@code nvidia}
 * instances are GPUs as the nvidia plugin's are: {@code devices} and {@code excludeDevices} choose which it
 * manages ({@link GpuSelection}; an instance's index is its place among the file's {@code nvidia} instances).
 */
public final class FakeDevicePlugin implements DevicePlugin {

    static final String NAME = "fake";
    static final String FILE_KEY = "file";
    /** Where it writes a CDI spec of its devices ({@link FakeCdiSpec}); none is written without it. */
    static final String CDI_SPEC_DIR_KEY = "cdiSpecDir";

    private static final String NVIDIA = "nvidia";
    private static final Logger LOG = LoggerFactory.getLogger(FakeDevicePlugin.class);

    private final PluginClock clock;
    private final Instant origin;
    private final ChangeSignal closing;
    private final Map<Call, AtomicLong> calls = new EnumMap<>(Call.class);
    private volatile FakeDeviceFile file;
    /** IDs of the file's instances that the GPU selection leaves out. */
    private volatile Set<String> unmanaged = Set.of();
    /** Where its CDI spec was written; empty when none was, and then reservations name no CDI devices. */
    private volatile Optional<Path> cdiSpecDir = Optional.empty();

    private volatile String crashed;
    private volatile boolean closed;

    /** {@code origin} is time zero of the file's timeline. */
    public FakeDevicePlugin(PluginClock clock, Instant origin) {
        this.clock = clock;
        this.origin = origin;
        this.closing = new ChangeSignal(clock);
        for (Call c : Call.values()) {
            calls.put(c, new AtomicLong());
        }
    }

    @Override
    public PluginInfo info() {
        return new PluginInfo(NAME, "1");
    }

    @Override
    public void configure(Map<String, Object> config) throws DevicePluginException {
        ConfigReader reader = new ConfigReader(config);
        String path = reader.string(FILE_KEY);
        String cdi = reader.string(CDI_SPEC_DIR_KEY);
        GpuSelection gpus = GpuSelection.read(reader);
        DevicePluginException.checkConfig(NAME, reader);
        if (path == null || path.isBlank()) {
            throw new DevicePluginException("device plugin fake: configuration key 'file' is missing; "
                    + "pass the device file as --device-plugin fake:FILE");
        }
        configure(FakeDeviceFileParser.parse(Path.of(path)), gpus);
        if (cdi != null && !cdi.isBlank()) {
            writeCdiSpec(Path.of(cdi));
        }
    }

    /**
     * Writes a CDI spec of the managed devices into {@code dir} ({@link FakeCdiSpec}); reservations then name them by
     * their CDI names.
     */
    public void writeCdiSpec(Path dir) throws DevicePluginException {
        FakeCdiSpec.write(dir, configured(), unmanaged);
        cdiSpecDir = Optional.of(dir);
    }

    /** Fails on what {@link #configure(Map)} would refuse in {@code config} itself (the file is read later). */
    static void checkConfig(Map<String, Object> config) throws DevicePluginException {
        ConfigReader reader = new ConfigReader(config);
        reader.string(FILE_KEY);
        reader.string(CDI_SPEC_DIR_KEY);
        GpuSelection.read(reader);
        DevicePluginException.checkConfig(NAME, reader);
    }

    /** Uses an already parsed file (tests build one in code). */
    public void configure(FakeDeviceFile parsed) {
        configure(parsed, GpuSelection.ALL);
    }

    /** Uses an already parsed file, managing the GPUs {@code gpus} selects. */
    public void configure(FakeDeviceFile parsed, GpuSelection gpus) {
        List<GpuSelection.Candidate> seen = new ArrayList<>();
        Set<String> left = new HashSet<>();
        for (Group g : parsed.groups()) {
            if (!g.vendor().equals(NVIDIA)) continue;
            for (Instance i : g.instances()) {
                GpuSelection.Candidate c = GpuSelection.Candidate.whole(i.id(), seen.size());
                seen.add(c);
                if (!gpus.manages(c)) left.add(i.id());
            }
        }
        List<String> unmatched = gpus.unmatched(seen);
        if (!unmatched.isEmpty()) {
            LOG.warn("device plugin fake: {} name no GPU in the device file; ignored", unmatched);
        }
        this.unmanaged = Set.copyOf(left);
        this.file = parsed;
    }

    @Override
    public Fingerprint fingerprint() throws DevicePluginException, InterruptedException {
        Optional<Fault> invalid = beforeCall(Call.FINGERPRINT);
        Fingerprint clean = snapshot(elapsed(clock.now()));
        return invalid.map(f -> corrupt(clean, f)).orElse(clean);
    }

    @Override
    public Fingerprint awaitChange(Fingerprint since, Duration timeout)
            throws DevicePluginException, InterruptedException {
        // Nothing moves between boundaries of the timeline; a fingerprint call fails once closed.
        return closing.awaitChange(since, timeout, this::fingerprint, this::nextBoundary);
    }

    @Override
    public List<InstanceStats> stats() throws DevicePluginException, InterruptedException {
        beforeCall(Call.STATS);
        Instant now = clock.now();
        return configured().groups().stream()
                .flatMap(g -> g.instances().stream())
                .filter(i -> !unmanaged.contains(i.id()))
                .flatMap(i -> i.stats().stream())
                .map(s -> s.withTimestamp(now))
                .toList();
    }

    @Override
    public Reservation reserve(List<String> instanceIds) throws DevicePluginException, InterruptedException {
        beforeCall(Call.RESERVE);
        Map<String, String> vendorOf = new HashMap<>();
        for (Group g : configured().groups()) {
            g.instances().stream()
                    .filter(i -> !unmanaged.contains(i.id()))
                    .forEach(i -> vendorOf.put(i.id(), g.vendor()));
        }
        Set<String> unknown = new LinkedHashSet<>();
        List<String> nvidia = new ArrayList<>();
        for (String id : instanceIds) {
            String vendor = vendorOf.get(id);
            if (vendor == null) {
                unknown.add(id);
            } else if (vendor.equals(NVIDIA) && !nvidia.contains(id)) {
                nvidia.add(id);
            }
        }
        if (!unknown.isEmpty()) {
            throw new DevicePluginException(
                    "device plugin fake: cannot reserve unknown or unmanaged instance(s) " + unknown);
        }
        Reservation r = NvidiaReservations.visibleDevices(nvidia);
        if (cdiSpecDir.isEmpty()) {
            return r;
        }
        Map<String, String> names = FakeCdiSpec.names(configured(), unmanaged);
        return r.withCdiDevices(instanceIds.stream()
                .distinct()
                .map(names::get)
                .filter(java.util.Objects::nonNull)
                .toList());
    }

    @Override
    public void close() {
        closed = true;
        closing.signal();
    }

    /** Counts the call and acts out the first fault scripted for it now; returns an INVALID fault to apply. */
    private Optional<Fault> beforeCall(Call call) throws DevicePluginException, InterruptedException {
        ensureOpen();
        FakeDeviceFile f = configured();
        if (crashed != null) {
            throw new DevicePluginException("device plugin fake crashed earlier: " + crashed);
        }
        long n = calls.get(call).incrementAndGet();
        Duration elapsed = elapsed(clock.now());
        for (Fault fault : f.faults()) {
            if (fault.call() != call || !fault.activeAt(n, elapsed)) {
                continue;
            }
            LOG.info("fake device plugin: {} on {} call {} at {}", fault.kind(), call, n, elapsed);
            switch (fault.kind()) {
                case CRASH -> {
                    crashed = fault.message();
                    throw new DevicePluginException("device plugin fake crashed: " + fault.message());
                }
                case ERROR -> throw new DevicePluginException("device plugin fake: " + fault.message());
                case HANG -> hang(fault);
                case INVALID -> {
                    return Optional.of(fault);
                }
            }
            return Optional.empty();
        }
        return Optional.empty();
    }

    private void hang(Fault fault) throws DevicePluginException, InterruptedException {
        long seen = closing.version();
        ensureOpen();
        Instant until = fault.duration().map(clock.now()::plus).orElse(Instant.MAX);
        while (!closed && clock.now().isBefore(until)) {
            seen = closing.await(seen, until);
        }
        ensureOpen();
    }

    private Fingerprint snapshot(Duration elapsed) throws DevicePluginException {
        List<DeviceGroup> groups = new ArrayList<>();
        for (Group g : configured().groups()) {
            List<DeviceInstance> instances = new ArrayList<>();
            for (Instance i : g.instances()) {
                if (unmanaged.contains(i.id())) {
                    continue;
                }
                Optional<HealthWindow> sick =
                        i.unhealthy().stream().filter(w -> w.covers(elapsed)).findFirst();
                instances.add(
                        sick.isPresent()
                                ? new DeviceInstance(i.id(), false, sick.get().reason(), i.pciBusId(), i.gpu())
                                : new DeviceInstance(
                                        i.id(), i.healthy(), i.healthDescription(), i.pciBusId(), i.gpu()));
            }
            if (!instances.isEmpty()) {
                groups.add(new DeviceGroup(g.vendor(), g.type(), g.model(), g.attributes(), instances));
            }
        }
        return Fingerprint.of(groups);
    }

    private static Fingerprint corrupt(Fingerprint clean, Fault fault) {
        List<DeviceGroup> groups = new ArrayList<>(clean.groups());
        if (groups.isEmpty()) {
            return clean;
        }
        DeviceGroup first = groups.getFirst();
        List<DeviceInstance> instances = new ArrayList<>(first.instances());
        DeviceInstance one = instances.getFirst();
        String vendor = first.vendor();
        switch (fault.output()) {
            case DUPLICATE_IDS -> instances.add(one);
            case EMPTY_ID ->
                instances.set(
                        0, new DeviceInstance("", one.healthy(), one.healthDescription(), one.pciBusId(), one.gpu()));
            case EMPTY_VENDOR -> vendor = "";
        }
        groups.set(0, new DeviceGroup(vendor, first.type(), first.model(), first.attributes(), instances));
        return Fingerprint.of(groups);
    }

    /** The next time after {@code now} at which a health window or a fault window opens or closes. */
    private Optional<Instant> nextBoundary(Instant now) throws DevicePluginException {
        Duration elapsed = elapsed(now);
        FakeDeviceFile f = configured();
        Stream<Duration> health = f.groups().stream()
                .flatMap(g -> g.instances().stream())
                .flatMap(i -> i.unhealthy().stream())
                .flatMap(w -> Stream.concat(Stream.of(w.from()), w.until().stream()));
        Stream<Duration> faults =
                f.faults().stream().flatMap(x -> Stream.concat(Stream.of(x.from()), x.until().stream()));
        return Stream.concat(health, faults)
                .filter(d -> d.compareTo(elapsed) > 0)
                .min(Duration::compareTo)
                .map(origin::plus);
    }

    private Duration elapsed(Instant now) {
        return Duration.between(origin, now);
    }

    private FakeDeviceFile configured() throws DevicePluginException {
        FakeDeviceFile f = file;
        if (f == null) {
            throw new DevicePluginException("device plugin fake is not configured: call configure() first");
        }
        return f;
    }

    private void ensureOpen() throws DevicePluginException {
        if (closed) {
            throw new DevicePluginException("device plugin fake is closed");
        }
    }
}
