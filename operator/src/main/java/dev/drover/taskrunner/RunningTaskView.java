package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.driver.DriverException;
import dev.drover.driver.TaskNotRunningException;
import java.util.function.Consumer;

/** The running task as its {@link TaskRunningHook}s see it: its runner's restart and signal, and its events. */
final class RunningTaskView implements RunningTask {

    /** The runner's {@code signal}. */
    @FunctionalInterface
    interface Signal {
        void send(String signal, String reason) throws DriverException, InterruptedException;
    }

    private final Consumer<String> restart;
    private final Signal signal;
    private final Consumer<TaskEvent> events;

    RunningTaskView(Consumer<String> restart, Signal signal, Consumer<TaskEvent> events) {
        this.restart = restart;
        this.signal = signal;
        this.events = events;
    }

    @Override
    public void restart(String reason) {
        restart.accept(reason);
    }

    @Override
    public void signal(String name, String reason) {
        try {
            signal.send(name, reason);
        } catch (TaskNotRunningException ended) {
            // it exited meanwhile: its exit has an event of its own
        } catch (DriverException recorded) {
            // a DriverFailure event says so; the task runs on
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void event(TaskEvent e) {
        events.accept(e);
    }
}
