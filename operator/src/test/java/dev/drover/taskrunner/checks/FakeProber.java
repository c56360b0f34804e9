package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link CheckProber} whose probes the test runs: each {@link #probe} is handed to the test, which pushes results
 * to its listener from its own thread (never the thread that began the probing, as the real prober does).
 */
public final class FakeProber implements CheckProber {

    /** One task's probing, as the test drives it. */
    public static final class Probed implements Probing {
        public final String allocation;
        public final Target target;
        public final List<Check> checks;
        private final Listener listener;
        private volatile boolean closed;

        Probed(String allocation, Target target, List<Check> checks, Listener listener) {
            this.allocation = allocation;
            this.target = target;
            this.checks = List.copyOf(checks);
            this.listener = listener;
        }

        /** Reports {@code result} for the check named {@code name}, as one probe of it would. */
        public void push(String name, ProbeResult result) {
            Check c = checks.stream()
                    .filter(x -> x.getName().equals(name))
                    .findFirst()
                    .orElseThrow();
            listener.result(c, result);
        }

        /** Tells that the check named {@code name} could not be probed for lack of a slot, as the prober would. */
        public void stale(String name) {
            listener.stale(checks.stream()
                    .filter(x -> x.getName().equals(name))
                    .findFirst()
                    .orElseThrow());
        }

        public boolean closed() {
            return closed;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private final BlockingQueue<Probed> begun = new LinkedBlockingQueue<>();
    public final List<Probed> all = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    @Override
    public Probing probe(String allocation, Target target, List<Check> checks, Listener listener) {
        if (closed) {
            throw new IllegalStateException("the prober is closed");
        }
        Probed p = new Probed(allocation, target, checks, listener);
        all.add(p);
        begun.add(p);
        return p;
    }

    /** The next probing begun (a start of a task with checks), waiting up to 20 s for it. */
    public Probed next() throws InterruptedException {
        Probed p = begun.poll(20, TimeUnit.SECONDS);
        if (p == null) {
            throw new AssertionError("no probing began");
        }
        return p;
    }

    public boolean closed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
    }
}
