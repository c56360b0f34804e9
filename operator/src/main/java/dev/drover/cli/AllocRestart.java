package dev.drover.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.allocrunner.UserRestart;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.Task;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
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

    /**
     * The caller's user name as the API server authenticates them (a SelfSubjectReview, Kubernetes 1.28 or later);
     * null when the API server cannot say.
     */
    static String whoAmI(KubernetesClient client) {
        try {
            GenericKubernetesResource review = client.genericKubernetesResources(
                            "authentication.k8s.io/v1", "SelfSubjectReview")
                    .resource(new GenericKubernetesResourceBuilder()
                            .withApiVersion("authentication.k8s.io/v1")
                            .withKind("SelfSubjectReview")
                            .withNewMetadata()
                            .endMetadata()
                            .build())
                    .create();
            Object status = review.getAdditionalProperties().get("status");
            if (status instanceof Map<?, ?> s
                    && s.get("userInfo") instanceof Map<?, ?> info
                    && info.get("username") instanceof String name
                    && !name.isEmpty()) {
                return name;
            }
            return null;
        } catch (KubernetesClientException e) {
            return null;
        }
    }

    /** {@code task} null restarts every running task. */
    static void run(
            KubernetesClient client, String alloc, String task, String namespace, InstantSource clock, PrintStream out)
            throws CommandFailure {
        // milliseconds: two restarts asked for within a second are two values
        String when = clock.instant().truncatedTo(ChronoUnit.MILLIS).toString();
        String value = task == null ? when : task + "@" + when;
        try {
            var resource =
                    client.resources(Allocation.class).inNamespace(namespace).withName(alloc);
            Allocation a = resource.get();
            if (a == null) {
                throw new CommandFailure("allocation " + namespace + "/" + TerminalText.clean(alloc) + " not found");
            }
            List<String> tasks = a.getSpec() == null || a.getSpec().getTasks() == null
                    ? List.of()
                    : a.getSpec().getTasks().stream().map(Task::getName).toList();
            if (task != null && !tasks.contains(task)) {
                throw new CommandFailure("allocation " + namespace + "/" + alloc + " has no task "
                        + TerminalText.clean(task) + " (its tasks: " + TerminalText.clean(String.join(", ", tasks))
                        + ")");
            }
            resource.patch(PatchContext.of(PatchType.JSON_MERGE), mergePatch(value, whoAmI(client)));
        } catch (KubernetesClientException e) {
            throw ApiAnswers.failure(e, client.getMasterUrl().toString());
        }
        out.println("allocation " + namespace + "/" + alloc + ": restart of "
                + (task == null ? "every running task" : "task " + task + " (if running)") + " requested ("
                + UserRestart.ANNOTATION + "=" + value + ")");
    }
}
