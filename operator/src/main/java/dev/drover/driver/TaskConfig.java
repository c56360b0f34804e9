package dev.drover.driver;

import java.nio.file.Path;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What a driver needs to start one task.
 *
 * @param config  the task's driver config, already validated by {@link Driver#validate}
 * @param env     the task's environment, Drover's own variables included
 * @param logsDir where {@code <task>.stdout.N} and {@code <task>.stderr.N} go
 * @param resources what the task asked for, which drivers that confine tasks hold it to
 * @param user    the user (a name or a uid) the task asked to run as; null for the driver's default
 * @param events  where the driver tells what happens as it starts the task ({@link DriverEvent})
 */
public record TaskConfig(
        String namespace,
        String allocName,
        String taskName,
        Map<String, Object> config,
        Map<String, String> env,
        Path allocDir,
        Path taskDir,
        Path logsDir,
        Path secretsDir,
        TaskResources resources,
        String user,
        TaskAttachments attachments,
        Consumer<DriverEvent> events) {

    public TaskConfig {
        config = Map.copyOf(config);
        env = Map.copyOf(env);
        resources = resources == null ? TaskResources.NONE : resources;
        attachments = attachments == null ? TaskAttachments.NONE : attachments;
        events = events == null ? e -> {} : events;
    }

    /** A task whose driver's events are not heard. */
    public TaskConfig(
            String namespace,
            String allocName,
            String taskName,
            Map<String, Object> config,
            Map<String, String> env,
            Path allocDir,
            Path taskDir,
            Path logsDir,
            Path secretsDir,
            TaskResources resources,
            String user) {
        this(
                namespace,
                allocName,
                taskName,
                config,
                env,
                allocDir,
                taskDir,
                logsDir,
                secretsDir,
                resources,
                user,
                null,
                null);
    }

    /** This task, its driver's events told to {@code sink}. */
    public TaskConfig withEvents(Consumer<DriverEvent> sink) {
        return new TaskConfig(
                namespace,
                allocName,
                taskName,
                config,
                env,
                allocDir,
                taskDir,
                logsDir,
                secretsDir,
                resources,
                user,
                attachments,
                sink);
    }

    /** This task with {@code config} for its driver config (a driver that reads some keys itself passes the rest on). */
    public TaskConfig withConfig(Map<String, Object> config) {
        return new TaskConfig(
                namespace,
                allocName,
                taskName,
                config,
                env,
                allocDir,
                taskDir,
                logsDir,
                secretsDir,
                resources,
                user,
                attachments,
                events);
    }

    /** This task lent {@code attachments}. */
    public TaskConfig withAttachments(TaskAttachments attachments) {
        return new TaskConfig(
                namespace,
                allocName,
                taskName,
                config,
                env,
                allocDir,
                taskDir,
                logsDir,
                secretsDir,
                resources,
                user,
                attachments,
                events);
    }

    /** Names the environment's variables but never their values: some are read from Secrets. */
    @Override
    public String toString() {
        return "TaskConfig[" + namespace + "/" + allocName + "/" + taskName + ", config=" + config.keySet()
                + ", env=" + new java.util.TreeSet<>(env.keySet()) + ", taskDir=" + taskDir + ", resources="
                + resources + ", user=" + user + ", " + attachments + "]";
    }

    /** A task that runs as the driver's default user. */
    public TaskConfig(
            String namespace,
            String allocName,
            String taskName,
            Map<String, Object> config,
            Map<String, String> env,
            Path allocDir,
            Path taskDir,
            Path logsDir,
            Path secretsDir,
            TaskResources resources) {
        this(
                namespace,
                allocName,
                taskName,
                config,
                env,
                allocDir,
                taskDir,
                logsDir,
                secretsDir,
                resources,
                null,
                null,
                null);
    }

    /** A task that asked for no resources. */
    public TaskConfig(
            String namespace,
            String allocName,
            String taskName,
            Map<String, Object> config,
            Map<String, String> env,
            Path allocDir,
            Path taskDir,
            Path logsDir,
            Path secretsDir) {
        this(
                namespace,
                allocName,
                taskName,
                config,
                env,
                allocDir,
                taskDir,
                logsDir,
                secretsDir,
                TaskResources.NONE,
                null,
                null,
                null);
    }

    /** The task's id among all tasks on the node: {@code namespace/alloc/task}. */
    public String id() {
        return namespace + "/" + allocName + "/" + taskName;
    }

    public Path stdout() {
        return logsDir.resolve(taskName + ".stdout.0");
    }

    public Path stderr() {
        return logsDir.resolve(taskName + ".stderr.0");
    }
}
