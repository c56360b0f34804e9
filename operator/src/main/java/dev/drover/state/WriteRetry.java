package dev.drover.state;

import dev.drover.common.Backoff;
import dev.drover.logging.LogThrottle;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes again, with bounded back-off, what the store failed to write: a full
 * disk is transient, and what waits is written once it has room. One virtual
 * thread, started at the first failure, stopped by {@link #close}. Failures are
 * logged at most once per {@link #LOG_INTERVAL}, with the count held back.
 */
final class WriteRetry implements AutoCloseable {

    /** The back-off of the durable store: first retry soon, then at most twice a minute. */
    static final Backoff DEFAULT_BACKOFF = Backoff.from(Duration.ofSeconds(1), Duration.ofSeconds(30));

    private static final Duration LOG_INTERVAL = Duration.ofSeconds(30);
    private static final Logger LOG = LoggerFactory.getLogger(WriteRetry.class);

    private final DeduplicatingStore store;
    /** Waits between attempts while the store keeps failing. */
    private final Backoff backoff;

    private final LogThrottle throttle = new LogThrottle(LOG_INTERVAL);
    private final Semaphore wake = new Semaphore(0);
    private volatile Consumer<String> onStored = alloc -> {};
    private Thread thread;
    private volatile boolean closed;

    /** @param store the store whose failed writes this retries; call {@link #failed} from its failure hook */
    WriteRetry(DeduplicatingStore store, Backoff backoff) {
        this.store = store;
        this.backoff = backoff;
    }

    /** {@code listener} is told (on the retry thread) of each allocation whose waiting writes are all stored now. */
    void onStored(Consumer<String> listener) {
        this.onStored = listener;
    }

    /** A write failed: log it (throttled) and make sure it is tried again. */
    void failed() {
        throttle.log(
                "write",
                suppressed -> LOG.warn(
                        "the state store cannot write: {}; what failed is kept and" + " written again with back-off{}",
                        store.lastFailure(),
                        suppressed == 0 ? "" : " (" + suppressed + " more failed writes since the last line)"));
        synchronized (this) {
            if (thread == null && !closed) {
                thread = Thread.ofVirtual().name("drover-state-retry").start(this::loop);
            }
        }
        wake.release();
    }

    private void loop() {
        Backoff wait = backoff;
        while (!closed) {
            try {
                if (!store.hasUnstored()) {
                    wake.acquire();
                    wake.drainPermits();
                    wait = wait.reset();
                    continue;
                }
                // Woken early by new failures too: those only mean the store still fails, so sleep the rest.
                long until = System.nanoTime() + wait.current().toNanos();
                for (long left = wait.current().toNanos(); left > 0 && !closed; left = until - System.nanoTime()) {
                    wake.tryAcquire(left, TimeUnit.NANOSECONDS);
                }
                wake.drainPermits();
                if (closed) {
                    return;
                }
                Set<String> before = new HashSet<>(store.unstoredAllocations());
                boolean stored = store.retry();
                Set<String> now = store.unstoredAllocations();
                before.removeAll(now);
                if (stored) {
                    LOG.info("the state store writes again: everything that waited is stored");
                    wait = wait.reset();
                } else {
                    wait = wait.next();
                }
                before.forEach(onStored);
            } catch (InterruptedException e) {
                return;
            } catch (IllegalStateException closedStore) {
                return;
            } catch (RuntimeException e) {
                LOG.warn("retrying state store writes failed: {}", e.toString());
            }
        }
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            t = thread;
        }
        wake.release();
        if (t != null) {
            boolean interrupted = false;
            while (true) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
