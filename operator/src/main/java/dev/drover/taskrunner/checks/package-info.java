/**
 * Health checks of running tasks ({@code checks} of a task: http, tcp and exec), as Nomad's client checks.
 *
 * <p>Pure decisions, no I/O: {@link dev.drover.taskrunner.checks.ProbeResult} (what one probe found), {@link
 * dev.drover.taskrunner.checks.CheckState} (a check's status from its results and thresholds) and {@link
 * dev.drover.taskrunner.checks.CheckRestartTracker} (whether failing checks restart their task).
 *
 * <p>Probing, for the whole agent: {@link dev.drover.taskrunner.checks.CheckProber} is the shape a task's runner
 * uses; {@link dev.drover.taskrunner.checks.CheckScheduler} implements it with one scheduling thread and probes on
 * virtual threads, a bounded number at a time, shared fairly among allocations ({@code ProbeSlots}). Each probe is one small class: {@code HttpProbe} (with {@code
 * HttpResponseReader}), {@code TcpProbe} and {@code ExecProbe}; every one is bounded by its check's timeout and
 * reads a bounded amount of what the task answers, and {@code ProbeOutput} makes what it says safe to show. Time goes
 * through {@code CheckTimer} and first-probe spreading through {@code Jitter}, so tests drive both.
 */
package dev.drover.taskrunner.checks;
