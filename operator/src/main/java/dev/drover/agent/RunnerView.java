package dev.drover.agent;

import dev.drover.allocrunner.AllocRunner;
import dev.drover.allocwatcher.Claimant;
import dev.drover.allocwatcher.DiskClaims;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.devices.DeviceLedger;
import dev.drover.devices.DeviceManager;
import dev.drover.devices.DeviceStats;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.TaskStats;
import dev.drover.httpapi.LocalAllocation;
import dev.drover.taskrunner.TaskRunner;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** What the HTTPS API reads of one allocation: its runner's tasks, directory and devices. */
final class RunnerView implements LocalAllocation {

    private final AllocRunner runner;
    private final DeviceLedger ledger;
    private final DeviceManager devices;

    /** {@code ledger} and {@code devices} are null on an agent without device plugins. */
    RunnerView(AllocRunner runner, DeviceLedger ledger, DeviceManager devices) {
        this.runner = runner;
        this.ledger = ledger;
        this.devices = devices;
    }

    @Override
    public List<String> tasks() {
        return List.copyOf(runner.taskRunners().keySet());
    }

    @Override
    public boolean dead(String task) {
        TaskState s = runner.allocState().taskStates().get(task);
        return s == null || s.getState() == TaskState.State.Dead;
    }

    @Override
    public String state(String task) {
        TaskState s = runner.allocState().taskStates().get(task);
        return s == null || s.getState() == null
                ? TaskState.State.Pending.name()
                : s.getState().name();
    }

    @Override
    public Path logsDir() {
        return runner.dir().logs();
    }

    @Override
    public Optional<TaskStats> stats(String task) throws DriverException, InterruptedException {
        TaskRunner r = runner.taskRunners().get(task);
        return r == null ? Optional.empty() : r.stats();
    }

    @Override
    public void signal(String task, String signal, String reason) throws DriverException, InterruptedException {
        runner.task(task).signal(signal, reason);
    }

    @Override
    public ExecProcess exec(String task, ExecRequest request, String reason)
            throws DriverException, InterruptedException {
        return runner.task(task).exec(request, reason);
    }

    @Override
    public DeviceStats.AllocationStats devices() {
        return ledger == null
                ? DeviceStats.AllocationStats.NONE
                : DeviceStats.of(ledger.reservations(runner.id()), devices);
    }

    @Override
    public void snapshot(OutputStream out) throws IOException {
        runner.dir().snapshot(tasks(), out);
    }

    @Override
    public void claimDisk(Claimant claimant) throws IOException {
        DiskClaims.claim(runner.dir().root(), claimant);
    }
}
