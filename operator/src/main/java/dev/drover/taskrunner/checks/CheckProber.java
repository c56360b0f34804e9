package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;

/**
 * Probes the checks of running tasks, for the whole agent: one schedule, a bounded number of probes at a time shared
 * fairly among allocations, so that a slow or hanging probe holds neither a task runner nor other allocations'
 * checks.
 */
public interface CheckProber extends AutoCloseable {

    /**
     * Begins probing {@code checks} of a task of {@code allocation} ({@code namespace/name}: the probes of its tasks
     * share one part of the slots) whose process started (or was reattached to) now: each check first after its
     * {@code initialDelay}, then every {@code interval}, each probe bounded by its {@code timeout}. Results reach
     * {@code listener} on the prober's threads, one at a time for one task, never on the caller's.
     */
    Probing probe(String allocation, Target target, List<Check> checks, Listener listener);

    /** Stops every probing and the prober's threads. */
    @Override
    void close();

    /**
     * What a task's probes reach: http and tcp checks a port number on the node's loopback address or a port of the
     * allocation by name ({@link #address}), exec checks the task itself.
     */
    @FunctionalInterface
    interface Target {

        /**
         * Where an http or tcp check of {@code port} connects: a number on the node's loopback address; a name
         * nowhere unless the target knows the allocation's ports (empty: no such port).
         */
        default Optional<InetSocketAddress> address(IntOrString port) {
            return port != null && port.getIntVal() != null
                    ? Optional.of(new InetSocketAddress(TcpProbe.LOOPBACK, port.getIntVal()))
                    : Optional.empty();
        }

        /** Starts an exec check's command inside the task, in its confinement. */
        ExecProcess exec(ExecRequest request) throws DriverException, InterruptedException;
    }

    /** Takes one task's probe results. */
    @FunctionalInterface
    interface Listener {
        void result(Check check, ProbeResult result);

        /**
         * A probe of {@code check} was due while its previous one still waited for a probe slot: what the check last
         * found is stale until its next result. Nothing by default.
         */
        default void stale(Check check) {}
    }

    /** The probes of one task, while it runs. */
    interface Probing extends AutoCloseable {
        /** Stops this task's probes; a probe under way is abandoned and its result dropped. Returns at once. */
        @Override
        void close();
    }
}
