package dev.drover.httpapi;

import dev.drover.allocwatcher.Claimant;
import dev.drover.allocwatcher.DiskClaimedException;
import dev.drover.devices.DeviceStats;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.TaskStats;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** What the agent's API reads of an allocation this agent runs. */
public interface LocalAllocation {

    /** The allocation's tasks, in spec order. */
    List<String> tasks();

    /** Whether the task is dead for good (a followed log ends). */
    boolean dead(String task);

    /** The task's state as its status shows it ({@code Pending}, {@code Running}, {@code Dead}). */
    String state(String task);

    /** The shared log directory ({@code alloc/logs}). */
    Path logsDir();

    /** The task's usage now; empty when it is not running. */
    Optional<TaskStats> stats(String task) throws DriverException, InterruptedException;

    /**
     * Sends {@code signal} (a name {@link dev.drover.api.Signals} knows) to the running task, with a {@code Signaling}
     * event that says {@code reason}.
     *
     * @throws dev.drover.driver.TaskNotRunningException when the task is not running
     */
    void signal(String task, String signal, String reason) throws DriverException, InterruptedException;

    /**
     * Starts a command inside the running task, with an {@code Exec} event that says {@code reason}; the caller
     * reads, waits for and closes what it returns.
     *
     * @throws dev.drover.driver.TaskNotRunningException when the task is not running
     */
    ExecProcess exec(String task, ExecRequest request, String reason) throws DriverException, InterruptedException;

    /** The allocation's reserved devices' latest statistics. */
    DeviceStats.AllocationStats devices();

    /** Writes the ephemeral disk as a tar stream. */
    void snapshot(OutputStream out) throws IOException;

    /**
     * Claims the ephemeral disk for {@code claimant} ({@link dev.drover.allocwatcher.DiskClaims}): returns when it
     * is the claimant's, now or from before; throws {@link DiskClaimedException} when another successor holds it.
     */
    void claimDisk(Claimant claimant) throws IOException;
}
