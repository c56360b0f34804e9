package dev.drover.node;

import dev.drover.common.Backoff;
import dev.drover.kube.NodeView;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A watch of one Node, by name (a {@code metadata.name} field selector, which every Kubernetes version serves for
 * every resource), that its owner reopens when it fails: after {@link #FIRST}, doubling to {@link #LONGEST}, and
 * back to {@link #FIRST} once an event arrives. Each event's Node goes to {@code seen} (the fields the agent reads, {@link NodeView}), on fabric8's thread for
 * this watch. Thread-safe.
 */
final class NodeWatch implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeWatch.class);
    static final Duration FIRST = Duration.ofSeconds(1);
    static final Duration LONGEST = Duration.ofMinutes(2);

    private final KubernetesClient client;
    private final String node;
    private final Consumer<NodeView> seen;
    private final LongSupplier nanoTime;
    private Watch watch;
    /** Whether a watch is open or being opened. */
    private boolean open;
    /** Which opening the current watch is: callbacks of an earlier one are ignored. */
    private long generation;

    private long retryAt;
    private Backoff backoff = Backoff.from(FIRST, LONGEST);
    private long failures;
    private boolean closed;

    NodeWatch(KubernetesClient client, String node, Consumer<NodeView> seen, LongSupplier nanoTime) {
        this.client = client;
        this.node = node;
        this.seen = seen;
        this.nanoTime = nanoTime;
        this.retryAt = nanoTime.getAsLong();
    }

    /** Opens the watch if it is not open and its next try is due; the owner's loop calls it. */
    void openIfDue() {
        long attempt;
        synchronized (this) {
            if (closed || open || nanoTime.getAsLong() - retryAt < 0) {
                return;
            }
            open = true;
            attempt = ++generation;
        }
        Watch opened;
        try {
            opened = NodeView.resource(client, node).watch(new Events(attempt));
        } catch (RuntimeException e) {
            failed(attempt, e.getMessage());
            return;
        }
        boolean keep;
        synchronized (this) {
            keep = !closed && open && attempt == generation;
            if (keep) {
                watch = opened;
            }
        }
        if (!keep) {
            opened.close(); // it failed, or this was closed, while it opened
        }
    }

    /** Whether a watch is open (or being opened). */
    synchronized boolean isOpen() {
        return open;
    }

    /** How long until the next try to open it; {@link Long#MAX_VALUE} while it is open. */
    synchronized long nanosUntilRetry() {
        return open ? Long.MAX_VALUE : Math.max(0, retryAt - nanoTime.getAsLong());
    }

    /** How many times opening or keeping the watch failed. */
    synchronized long failures() {
        return failures;
    }

    private synchronized void failed(long attempt, String why) {
        if (closed || !open || attempt != generation) {
            return;
        }
        open = false;
        watch = null;
        failures++;
        retryAt = nanoTime.getAsLong() + backoff.current().toNanos();
        LOG.warn(
                "the watch of node {} failed (opened again in {} s; its fields are read every check meanwhile): {}",
                node,
                backoff.current().toSeconds(),
                why);
        backoff = backoff.next();
    }

    private synchronized boolean current(long attempt) {
        if (closed || attempt != generation) {
            return false;
        }
        backoff = backoff.reset(); // an event: the watch works
        return true;
    }

    @Override
    public void close() {
        Watch w;
        synchronized (this) {
            closed = true;
            w = watch;
            watch = null;
        }
        if (w != null) {
            w.close();
        }
    }

    private final class Events implements Watcher<GenericKubernetesResource> {
        private final long attempt;

        Events(long attempt) {
            this.attempt = attempt;
        }

        @Override
        public void eventReceived(Action action, GenericKubernetesResource resource) {
            if (current(attempt) && resource != null) {
                seen.accept(NodeView.of(client.getKubernetesSerialization(), resource));
            }
        }

        @Override
        public void onClose(WatcherException cause) {
            failed(attempt, cause.getMessage());
        }
    }
}
