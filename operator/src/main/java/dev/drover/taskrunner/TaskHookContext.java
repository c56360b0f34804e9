package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Resources;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.driver.TaskAttachments;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskResources;
import dev.drover.state.AllocId;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What prestart hooks read and fill in for one start: the paths, and the
 * environment the task will get (hooks add to it in order, later ones winning).
 */
public final class TaskHookContext {

    private final AllocId allocId;
    private final Task task;
    private final AllocationSpec spec;
    private final TaskConfig template;
    private final InstantSource clock;
    private final Consumer<TaskEvent> events;
    private final Map<String, String> env = new LinkedHashMap<>();
    private final Map<Integer, String> valuesFrom = new java.util.HashMap<>();
    private final TaskAttachments.Builder attachments = new TaskAttachments.Builder();

    TaskHookContext(
            AllocId allocId,
            Task task,
            AllocationSpec spec,
            TaskConfig template,
            InstantSource clock,
            Consumer<TaskEvent> events) {
        this.allocId = allocId;
        this.task = task;
        this.spec = spec;
        this.template = template;
        this.clock = clock;
        this.events = events;
    }

    public AllocId allocId() {
        return allocId;
    }

    public Task task() {
        return task;
    }

    /** The allocation's spec as of this start (the task's definition came with it). */
    public AllocationSpec spec() {
        return spec;
    }

    /** Paths and identity of the task; its config and env are the runner's to fill. */
    public TaskConfig paths() {
        return template;
    }

    public InstantSource clock() {
        return clock;
    }

    /** Records a task event (e.g. TaskSetup). */
    public void event(TaskEvent e) {
        events.accept(e);
    }

    public Map<String, String> env() {
        return env;
    }

    /**
     * The values read for the task's {@code valueFrom} variables, by index in its {@code env}; the environment hook
     * puts them in their place among the others.
     */
    public Map<Integer, String> valuesFrom() {
        return valuesFrom;
    }

    /** What the task is lent beyond its directories (mounts, devices, registry credentials): hooks add to it. */
    public TaskAttachments.Builder attachments() {
        return attachments;
    }

    /** The driver's view of the task once every hook has run. */
    TaskConfig taskConfig() {
        return new TaskConfig(
                template.namespace(),
                template.allocName(),
                task.getName(),
                task.effectiveConfig(),
                env,
                template.allocDir(),
                template.taskDir(),
                template.logsDir(),
                template.secretsDir(),
                resources(task.getResources()),
                task.getUser(),
                attachments.build(),
                null);
    }

    private static TaskResources resources(Resources r) {
        if (r == null) {
            return TaskResources.NONE;
        }
        return new TaskResources(
                r.getCpuMillis() == null ? 0 : Math.max(0, r.getCpuMillis()),
                r.getMemoryMB() == null ? 0 : Math.max(0, r.getMemoryMB()),
                Boolean.TRUE.equals(r.getCpuHardLimit()));
    }
}
