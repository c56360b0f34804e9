package dev.drover.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.allocrunner.UserRestart;
import dev.drover.api.v1alpha1.Task;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.PrintStream;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code kubectl drover restart ALLOC [TASK]}: sets the allocation's {@code drover.dev/restartedAt} annotation
 * (a JSON merge patch, with the user's own credentials) to the time now, or {@code TASK@time}, as {@code kubectl
 * rollout restart} does for a Deployment, and {@code drover.dev/restartedBy} to the caller's name, which the
 * agent's event repeats; the node's agent restarts the running tasks once for the new value.
 */
final class AllocRestart {

    private static final ObjectMapper JSON = new ObjectMapper();

    private AllocRestart() {}

    /**
     * {@code {"metadata":{"annotations":{"drover.dev/restartedAt":VALUE,"drover.dev/restartedBy":USER}}}}, escaped as
     * JSON needs; {@code user} null removes a {@code restartedBy} left by an earlier restart, which would name someone
     * else.
     */
    static String mergePatch(String value, String user) {
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(UserRestart.ANNOTATION, value);
        annotations.put(UserRestart.BY_ANNOTATION, user);
        try {
            return JSON.writeValueAsString(Map.of("metadata", Map.of("annotations", annotations)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e); // a map of strings always serializes
        }
    }

    /** {@code task} null restarts every running task. */
    static void run(
            KubernetesClient client, String alloc, String task, String namespace, InstantSource clock, PrintStream out)
            throws CommandFailure {
        run(new Fabric8Calls(client), alloc, task, namespace, clock, out);
    }

    /** As above, through {@code calls}. */
    static void run(
            ClusterCalls calls, String alloc, String task, String namespace, InstantSource clock, PrintStream out)
            throws CommandFailure {
        // milliseconds: two restarts asked for within a second are two values
        String when = clock.instant().truncatedTo(ChronoUnit.MILLIS).toString();
        String value = task == null ? when : task + "@" + when;
        AllocationParts a = calls.allocation(namespace, alloc);
        if (a == null) {
            throw new CommandFailure("allocation " + namespace + "/" + TerminalText.clean(alloc) + " not found");
        }
        List<String> tasks = a.spec() == null || a.spec().getTasks() == null
                ? List.of()
                : a.spec().getTasks().stream()
                        .filter(java.util.Objects::nonNull)
                        .map(Task::getName)
                        .toList();
        if (task != null && !tasks.contains(task)) {
            throw new CommandFailure("allocation " + namespace + "/" + alloc + " has no task "
                    + TerminalText.clean(task) + " (its tasks: " + TerminalText.clean(String.join(", ", tasks))
                    + ")");
        }
        calls.patch(namespace, alloc, mergePatch(value, calls.whoAmI()));
        out.println("allocation " + namespace + "/" + alloc + ": restart of "
                + (task == null ? "every running task" : "task " + task + " (if running)") + " requested ("
                + UserRestart.ANNOTATION + "=" + value + ")");
    }
}
