package dev.drover.gc;

import dev.drover.concurrent.Worker;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Collects terminal allocations, oldest first, while the node is over a
 * threshold of {@link GcPolicy}; never one that still runs. Runs every
 * interval and when {@link #terminalChanged()} is called, on one thread that
 * {@link #close()} joins.
 */
public final class GarbageCollector implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GarbageCollector.class);

    private final GcPolicy policy;
    private final DiskUsage usage;
    private final Map<String, Collectable> allocations = new ConcurrentHashMap<>();
    private final Semaphore wake = new Semaphore(0);
    private final List<Runnable> sweeps = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Worker worker;

    public GarbageCollector(GcPolicy policy, DiskUsage usage) {
        this.policy = policy;
        this.usage = usage;
        this.worker = Worker.startVirtual("drover-gc", this::pass);
    }

    public void track(Collectable c) {
        allocations.put(c.id(), c);
    }

    public void forget(String id) {
        allocations.remove(id);
    }

    /**
     * Runs {@code sweep} after every collection pass (each interval): cleanup that must be retried until it
     * succeeds, such as a directory that could not be removed.
     */
    public void afterEachPass(Runnable sweep) {
        sweeps.add(sweep);
    }

    /** An allocation became terminal: collect now rather than at the next interval. */
    public void terminalChanged() {
        wake.release();
    }

    private void pass(Worker self) throws InterruptedException {
        try {
            wake.tryAcquire(policy.interval().toNanos(), TimeUnit.NANOSECONDS);
            wake.drainPermits();
            if (!self.closed()) {
                collect();
            }
        } catch (RuntimeException e) {
            LOG.warn("garbage collection failed: {}", e.toString());
        }
        for (Runnable sweep : sweeps) {
            if (self.closed()) {
                return;
            }
            try {
                sweep.run();
            } catch (RuntimeException e) {
                LOG.warn("sweeping after garbage collection failed: {}", e.toString());
            }
        }
    }

    /** One collection: destroys oldest terminal allocations, a few at a time, until under every threshold. */
    public List<String> collect() throws InterruptedException {
        List<String> collected = new ArrayList<>();
        while (true) {
            List<Collectable> terminal = allocations.values().stream()
                    .filter(c -> c.terminalSince().isPresent())
                    .sorted(Comparator.comparing(c -> c.terminalSince().orElse(Instant.MAX)))
                    .toList();
            int over = overBy(allocations.size());
            if (terminal.isEmpty() || over == 0) {
                return collected;
            }
            List<Collectable> batch =
                    terminal.subList(0, Math.min(Math.min(over, terminal.size()), policy.parallelDestroys()));
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                List<Future<?>> running = new ArrayList<>();
                for (Collectable c : batch) {
                    running.add(pool.submit(() -> {
                        c.destroy();
                        return null;
                    }));
                }
                for (int i = 0; i < batch.size(); i++) {
                    try {
                        running.get(i).get();
                    } catch (java.util.concurrent.ExecutionException e) {
                        LOG.warn(
                                "collecting {} failed: {}",
                                batch.get(i).id(),
                                e.getCause().toString());
                    }
                    allocations.remove(batch.get(i).id());
                    collected.add(batch.get(i).id());
                }
            }
        }
    }

    /**
     * How many allocations to collect now: enough to get under the count limit, or
     * one batch when the disk or inodes are too full (measured again after it).
     */
    private int overBy(int count) {
        int byCount = Math.max(0, count - policy.maxAllocations());
        if (byCount > 0) {
            return byCount;
        }
        try {
            if (usage.disk() > policy.maxDiskUsage() || usage.inodes() > policy.maxInodeUsage()) {
                return policy.parallelDestroys();
            }
        } catch (IOException e) {
            LOG.warn("cannot read disk usage: {}", e.toString());
        }
        return 0;
    }

    @Override
    public void close() {
        worker.close();
    }
}
