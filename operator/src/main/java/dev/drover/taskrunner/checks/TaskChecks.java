package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckRestart;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.common.UserText;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.taskrunner.RunningTask;
import dev.drover.taskrunner.TaskRunningHook;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.net.InetSocketAddress;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task's checks while its process runs: probed through the agent's {@link CheckProber} (an exec check inside the
 * task, through its driver, without an {@code Exec} event per probe), each check's status kept by a {@link CheckState}
 * and reported in the task's state only when it changes, with a {@code CheckStatusChanged} event when the status
 * itself changed; and the task restarted, counted against its restart policy, when its {@code checkRestart} says so.
 * Every run starts its checks again, critical until they pass; a process the agent reattached to after its own
 * restart goes on from the checks its state reported. A check whose probe could not run for lack of a probe slot
 * keeps its status, reported stale ({@link CheckState#markStale}), and counts for no restart.
 */
public final class TaskChecks implements TaskRunningHook {

    /** The most of a probe's output a {@code CheckStatusChanged} event repeats; the task state keeps more. */
    static final int EVENT_OUTPUT = 300;

    private static final Logger LOG = LoggerFactory.getLogger(TaskChecks.class);

    private final CheckProber prober;
    private final String allocation;
    private final InstantSource clock;
    private final PortAddresses ports;
    /** The checks of the run being watched; null when none is. */
    private Run run;

    /**
     * Where a check that names one of the allocation's ports connects: the port's host port on the node's loopback,
     * or its port at the allocation's address in a bridge network; empty when it has no such port.
     */
    @FunctionalInterface
    public interface PortAddresses {
        Optional<InetSocketAddress> address(String portName);

        /** An allocation without ports. */
        PortAddresses NONE = name -> Optional.empty();
    }

    /** The checks of a task of {@code allocation} ({@code namespace/name}), probed by {@code prober}. */
    public TaskChecks(CheckProber prober, String allocation, InstantSource clock) {
        this(prober, allocation, clock, PortAddresses.NONE);
    }

    /** As above, checks naming a port of the allocation reaching it through {@code ports}. */
    public TaskChecks(CheckProber prober, String allocation, InstantSource clock, PortAddresses ports) {
        this.prober = prober;
        this.allocation = allocation;
        this.clock = clock;
        this.ports = ports;
    }

    /** The checks of one run of the task. */
    private static final class Run {
        final RunningTask task;
        final Map<String, CheckState> states = new LinkedHashMap<>();
        final CheckRestartTracker restarts;
        CheckProber.Probing probing;

        Run(RunningTask task, List<Check> checks, CheckRestartTracker restarts, InstantSource clock) {
            this.task = task;
            this.restarts = restarts;
            Map<String, CheckStatus> reported = new HashMap<>();
            for (CheckStatus c : task.reportedChecks()) {
                if (c != null && c.getName() != null) {
                    reported.put(c.getName(), c);
                }
            }
            for (Check c : checks) {
                states.put(c.getName(), CheckState.resumed(c, clock, reported.get(c.getName())));
            }
        }

        List<CheckStatus> reports() {
            return states.values().stream().map(CheckState::report).toList();
        }
    }

    @Override
    public void running(RunningTask task) {
        List<Check> checks = task.task().effectiveChecks();
        if (checks.isEmpty()) {
            return;
        }
        CheckRestartTracker restarts =
                new CheckRestartTracker(CheckRestart.resolve(task.task().getCheckRestart()), clock);
        restarts.taskStarted();
        Run r = new Run(task, checks, restarts, clock);
        synchronized (this) {
            run = r;
            task.checks(r.reports(), null);
            try {
                r.probing = prober.probe(allocation, target(task), checks, new CheckProber.Listener() {
                    @Override
                    public void result(Check check, ProbeResult result) {
                        TaskChecks.this.result(r, check, result);
                    }

                    @Override
                    public void stale(Check check) {
                        TaskChecks.this.stale(r, check);
                    }
                });
            } catch (RuntimeException e) {
                // the prober is closing (the agent stops): the task runs on, its checks unprobed and critical
                LOG.warn("task {}: its checks cannot be probed: {}", task.task().getName(), e.toString());
            }
        }
    }

    /** The running task's exec, and its allocation's ports by name beside numbers on loopback. */
    private CheckProber.Target target(RunningTask task) {
        return new CheckProber.Target() {
            @Override
            public ExecProcess exec(ExecRequest request) throws DriverException, InterruptedException {
                return task.exec(request);
            }

            @Override
            public Optional<InetSocketAddress> address(IntOrString port) {
                return port != null && port.getStrVal() != null
                        ? ports.address(port.getStrVal())
                        : CheckProber.Target.super.address(port);
            }
        };
    }

    @Override
    public void stopped() {
        Run r;
        synchronized (this) {
            r = run;
            run = null; // from now on results of its probes are dropped
        }
        if (r != null && r.probing != null) {
            r.probing.close();
        }
    }

    /** {@code check} of run {@code r} could not be probed for lack of a slot: reported as stale, its status kept. */
    private synchronized void stale(Run r, Check check) {
        CheckState state = r.states.get(check.getName());
        if (run == r && state != null && state.markStale()) {
            r.task.checks(r.reports(), null);
        }
    }

    /** One probe's result for {@code check} of run {@code r}: reported when it changes what the state shows. */
    private synchronized void result(Run r, Check check, ProbeResult result) {
        CheckState state = r.states.get(check.getName());
        if (run != r || state == null) {
            return; // a probe of a run that ended
        }
        Status was = state.status();
        if (state.record(result)) {
            r.task.checks(r.reports(), state.status() == was ? null : changed(state, was));
        }
        Optional<String> restart = r.restarts.observe(check.getName(), state.status());
        restart.ifPresent(r.task::restartFailing);
    }

    private TaskEvent changed(CheckState state, Status was) {
        CheckStatus now = state.report();
        String output = now.getOutput() == null || now.getOutput().isEmpty()
                ? ""
                : ": " + UserText.cut(now.getOutput(), EVENT_OUTPUT);
        return TaskEvent.of(TaskEventType.CheckStatusChanged, clock.instant())
                .withCheck(state.name(), state.status())
                .withMessage("check " + UserText.quote(state.name()) + " is " + lower(state.status()) + " (was "
                        + lower(was) + ")" + output);
    }

    static String lower(Status s) {
        return s.name().toLowerCase(java.util.Locale.ROOT);
    }
}
