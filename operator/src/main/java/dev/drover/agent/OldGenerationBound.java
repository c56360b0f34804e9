package dev.drover.agent;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryNotificationInfo;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.Optional;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the old generation from growing with garbage. In a burst of allocations the agent's statuses and requests
 * live a second or two, longer than the young generation keeps them, and the serial collector gives what it promotes
 * room by expanding the old generation rather than collecting it: at 10 000 allocations it grew to a gigabyte around
 * 300 MB of live objects. When the old generation's use passes {@link #FACTOR} times what the last full collection
 * left live ({@link #SMALL_FACTOR} times a live set of {@link #SMALL} or less, whose collection takes a few tens of
 * milliseconds; at least {@link #FLOOR}), this asks for a full collection and sets the next bound from what that one
 * left. The JVM checks the bound after each collection, on its own notification thread; no thread is started.
 */
final class OldGenerationBound implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OldGenerationBound.class);
    /** How far the old generation may grow past what was live after the last full collection, once that is large. */
    static final double FACTOR = 1.5;
    /** How far it may grow past a small live set ({@link #SMALL} or less), whose full collection costs little. */
    static final double SMALL_FACTOR = 1.25;
    /** The live set up to which {@link #SMALL_FACTOR} applies. */
    static final long SMALL = 128L << 20;
    /** Below this the old generation is left alone: an idle agent's is about 25 MB. */
    static final long FLOOR = 48L << 20;

    private final MemoryPoolMXBean pool;
    private final Runnable collect;
    private final NotificationListener listener = this::exceeded;

    private OldGenerationBound(MemoryPoolMXBean pool, Runnable collect) {
        this.pool = pool;
        this.collect = collect;
    }

    /** Bounds this JVM's old generation; empty when its collector has none that can be watched. */
    static Optional<OldGenerationBound> start() {
        return oldGeneration().map(p -> start(p, System::gc));
    }

    static OldGenerationBound start(MemoryPoolMXBean pool, Runnable collect) {
        OldGenerationBound bound = new OldGenerationBound(pool, collect);
        ((NotificationEmitter) ManagementFactory.getMemoryMXBean()).addNotificationListener(bound.listener, null, null);
        pool.setUsageThreshold(next(liveAfterLastCollection(pool)));
        return bound;
    }

    /** The bound that follows a full collection that left {@code live} bytes. */
    static long next(long live) {
        return Math.max(FLOOR, (long) (live * (live <= SMALL ? SMALL_FACTOR : FACTOR)));
    }

    private void exceeded(Notification n, Object handback) {
        if (!MemoryNotificationInfo.MEMORY_THRESHOLD_EXCEEDED.equals(n.getType())) {
            return;
        }
        MemoryNotificationInfo info =
                MemoryNotificationInfo.from((javax.management.openmbean.CompositeData) n.getUserData());
        if (!info.getPoolName().equals(pool.getName())) {
            return;
        }
        collect.run();
        long bound = next(liveAfterLastCollection(pool));
        pool.setUsageThreshold(bound);
        LOG.debug(
                "old generation past its bound: collected, {} MB live, next bound {} MB",
                liveAfterLastCollection(pool) >> 20,
                bound >> 20);
    }

    private static long liveAfterLastCollection(MemoryPoolMXBean pool) {
        return pool.getCollectionUsage() == null ? 0 : pool.getCollectionUsage().getUsed();
    }

    /** The heap pool that holds long-lived objects, when the JVM can tell when it passes a bound. */
    static Optional<MemoryPoolMXBean> oldGeneration() {
        return ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP && p.isUsageThresholdSupported())
                .filter(p -> p.getName().contains("Old") || p.getName().contains("Tenured"))
                .findFirst();
    }

    /** Removes the listener and the bound. */
    @Override
    public void close() {
        try {
            ((NotificationEmitter) ManagementFactory.getMemoryMXBean()).removeNotificationListener(listener);
        } catch (ListenerNotFoundException e) {
            // not there: nothing to remove
        }
        pool.setUsageThreshold(0);
    }
}
