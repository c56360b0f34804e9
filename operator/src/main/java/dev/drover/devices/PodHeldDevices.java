package dev.drover.devices;

import dev.drover.concurrent.Worker;
import dev.drover.logging.LogThrottle;
import dev.drover.podresources.PodDevices;
import dev.drover.podresources.PodResourcesException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's instances that Pods hold, as the kubelet's PodResources API tells: asked again before an admission
 * when the last answer is older than {@link Timing#maxAge} ({@link #fresh}), and every {@link Timing#period} on a
 * thread of its own so the Node shows it ({@link #last}).
 *
 * <p>What is safe when the kubelet does not tell: no socket (and none ever answered) means no kubelet PodResources
 * API here, so Pods hold nothing, said once at INFO. A socket that is there but does not answer (or no longer
 * there after it answered) may hide a Pod's GPU: its last answer is used for at most {@link Timing#keepLastGood},
 * then, and from the first failure when there was none, every instance is withheld ({@link HeldByPods.View#known}
 * false) until it answers again. Failures are logged at WARN, once a minute at most.
 */
public final class PodHeldDevices implements HeldByPods, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PodHeldDevices.class);

    /** The PodResources call; closed with this. */
    public interface Lister extends AutoCloseable {
        List<PodDevices> list() throws PodResourcesException, InterruptedException;

        @Override
        default void close() {}
    }

    /**
     * @param maxAge       how old an answer an admission still uses
     * @param period       how often the API is asked for the Node's sake
     * @param keepLastGood how long the last answer stands in for one the kubelet does not give
     */
    public record Timing(Duration maxAge, Duration period, Duration keepLastGood) {
        public static final Timing DEFAULT =
                new Timing(Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofMinutes(1));
    }

    private final Path socket;
    private final Lister lister;
    private final Supplier<Map<String, DeviceManager.Device>> devices;
    private final Timing timing;
    private final LongSupplier nanoTime;
    private final LogThrottle throttle;
    private final Object lock = new Object();
    private volatile View view = View.NONE;
    private volatile Consumer<View> changed = v -> {};
    private Worker worker;

    // guarded by lock
    private boolean asked;
    private long lastAsked;
    private boolean answered;
    private List<PodDevices> good;
    private long lastGood;
    private boolean absentSaid;
    private boolean failing;

    PodHeldDevices(
            Path socket,
            Lister lister,
            Supplier<Map<String, DeviceManager.Device>> devices,
            Timing timing,
            LongSupplier nanoTime) {
        this.socket = socket;
        this.lister = lister;
        this.devices = devices;
        this.timing = timing;
        this.nanoTime = nanoTime;
        this.throttle = new LogThrottle(Duration.ofMinutes(1), nanoTime);
    }

    /** Asks the API now, then every {@link Timing#period} until {@link #close}. */
    public static PodHeldDevices start(Path socket, Lister lister, DeviceManager devices, Timing timing) {
        PodHeldDevices held = new PodHeldDevices(socket, lister, devices::devices, timing, System::nanoTime);
        held.worker = Worker.startVirtual("pod-resources", self -> {
            held.ask();
            Thread.sleep(timing.period());
        });
        return held;
    }

    @Override
    public View fresh() {
        synchronized (lock) {
            if (!asked || nanoTime.getAsLong() - lastAsked >= timing.maxAge().toNanos()) {
                try {
                    ask();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return View.unknown("the agent stopped asking the kubelet");
                }
            }
            return view;
        }
    }

    @Override
    public View last() {
        return view;
    }

    @Override
    public void onChange(Consumer<View> changed) {
        this.changed = changed;
    }

    /** Asks the kubelet and sets the view from its answer, or from its silence. */
    void ask() throws InterruptedException {
        synchronized (lock) {
            long now = nanoTime.getAsLong();
            asked = true;
            lastAsked = now;
            if (!answered && !Files.exists(socket)) {
                if (!absentSaid) {
                    LOG.info(
                            "no kubelet PodResources API at {} (no such socket): device instances are taken as held"
                                    + " by no Pod (see podResourcesSocket in docs/configuration.md)",
                            socket);
                    absentSaid = true;
                }
                set(View.NONE);
                return;
            }
            try {
                List<PodDevices> pods = lister.list();
                answered = true;
                good = pods;
                lastGood = now;
                if (failing) {
                    LOG.info("the kubelet's PodResources API at {} answers again", socket);
                    failing = false;
                }
                set(View.held(PodDeviceMatch.held(devices.get().values(), pods)));
            } catch (PodResourcesException e) {
                failing = true;
                boolean keep =
                        good != null && now - lastGood <= timing.keepLastGood().toNanos();
                throttle.log(
                        "pod-resources",
                        suppressed -> LOG.warn(
                                "{}; {} ({} alike in the last minute)",
                                e.getMessage(),
                                keep
                                        ? "its last answer stands for at most "
                                                + timing.keepLastGood().toSeconds() + " s"
                                        : "no device instance is offered to allocations until it answers, since any may be"
                                                + " a Pod's",
                                suppressed));
                set(keep ? View.held(PodDeviceMatch.held(devices.get().values(), good)) : View.unknown(e.getMessage()));
            }
        }
    }

    private void set(View next) {
        if (!next.equals(view)) {
            view = next;
            changed.accept(next);
        }
    }

    @Override
    public void close() {
        if (worker != null) {
            worker.close();
        }
        lister.close();
    }
}
