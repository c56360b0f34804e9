package dev.drover.deviceplugin.nvidia;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for NVML error events (XIDs, double-bit ECC) on a platform thread: {@code nvmlEventSetWait_v2}
 * blocks in native code, which would pin a virtual thread's carrier. The wait is bounded by the poll
 * interval so {@link #close()} can stop and join the thread.
 */
final class XidWatcher implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(XidWatcher.class);
    static final long EVENT_TYPES = NvmlLayouts.EVENT_XID_CRITICAL | NvmlLayouts.EVENT_DOUBLE_BIT_ECC;

    private final Nvml nvml;
    private final Arena setArena;
    private final MemorySegment set;
    private final int pollMillis;
    private final Consumer<Nvml.Event> sink;
    private final CountDownLatch stop = new CountDownLatch(1);
    private final Thread thread;

    private XidWatcher(Nvml nvml, Arena setArena, MemorySegment set, Duration poll, Consumer<Nvml.Event> sink) {
        this.nvml = nvml;
        this.setArena = setArena;
        this.set = set;
        this.pollMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, poll.toMillis()));
        this.sink = sink;
        this.thread =
                Thread.ofPlatform().name("drover-nvml-events").daemon(true).unstarted(this::run);
    }

    /**
     * Registers every GPU that supports error events and starts waiting; empty when the library has no
     * events or no GPU supports them (health then comes only from what the queries report).
     */
    static Optional<XidWatcher> start(
            Nvml nvml, List<GpuInventory.Physical> gpus, Duration poll, Consumer<Nvml.Event> sink)
            throws NvmlException {
        Arena setArena = Arena.ofShared();
        Optional<MemorySegment> set = nvml.createEventSet(setArena);
        if (set.isEmpty()) {
            setArena.close();
            LOG.warn("nvidia: this NVML has no event sets; XID health events are not watched");
            return Optional.empty();
        }
        int registered = 0;
        try {
            for (GpuInventory.Physical gpu : gpus) {
                long types = nvml.supportedEventTypes(gpu.handle()) & EVENT_TYPES;
                if (types != 0 && nvml.registerEvents(gpu.handle(), types, set.get())) {
                    registered++;
                } else {
                    LOG.warn("nvidia: GPU {} reports no XID or ECC events; its health is not watched", gpu.uuid());
                }
            }
        } catch (NvmlException | RuntimeException e) {
            free(nvml, set.get(), setArena);
            throw e;
        }
        if (registered == 0) {
            free(nvml, set.get(), setArena);
            return Optional.empty();
        }
        XidWatcher w = new XidWatcher(nvml, setArena, set.get(), poll, sink);
        w.thread.start();
        return Optional.of(w);
    }

    private void run() {
        int lastError = NvmlException.SUCCESS;
        while (stop.getCount() > 0) {
            try {
                nvml.waitEvent(set, pollMillis).ifPresent(sink);
                lastError = NvmlException.SUCCESS;
            } catch (NvmlException e) {
                if (e.code() != lastError) {
                    LOG.warn("nvidia: waiting for GPU events failed, retrying: {}", e.getMessage());
                    lastError = e.code();
                }
                pause();
            } catch (RuntimeException e) {
                LOG.error("nvidia: handling a GPU event failed", e);
                pause();
            }
        }
    }

    private void pause() {
        try {
            stop.await(pollMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop.countDown();
        }
    }

    boolean running() {
        return thread.isAlive();
    }

    /** Stops and joins the thread, then frees the event set; a thread stuck in NVML is left, and said so. */
    @Override
    public void close() {
        stop.countDown();
        boolean joined;
        try {
            joined = thread.join(Duration.ofMillis(pollMillis).plusSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            joined = !thread.isAlive();
        }
        if (!joined) {
            LOG.error("nvidia: the GPU event thread did not return from nvmlEventSetWait_v2; leaving it");
            return;
        }
        free(nvml, set, setArena);
    }

    private static void free(Nvml nvml, MemorySegment set, Arena arena) {
        try {
            nvml.freeEventSet(set);
        } catch (NvmlException e) {
            LOG.warn("nvidia: freeing the event set failed: {}", e.getMessage());
        } finally {
            arena.close();
        }
    }
}
