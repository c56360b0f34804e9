package dev.drover.allocrunner;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A wait of the alloc runner's that gives up after its deadline (a kill, a destroy), saying so. */
final class BoundedWait {

    private static final Logger LOG = LoggerFactory.getLogger(BoundedWait.class);

    private BoundedWait() {}

    /** Waits for {@code f} at most {@code deadline}; a timeout or a failure is logged, not thrown. */
    static void await(CompletableFuture<?> f, Duration deadline) throws InterruptedException {
        try {
            f.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            LOG.warn("gave up waiting after {}", deadline);
        } catch (ExecutionException e) {
            LOG.warn("wait failed: {}", e.getCause().toString());
        }
    }
}
