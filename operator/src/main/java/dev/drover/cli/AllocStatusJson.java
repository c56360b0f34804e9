package dev.drover.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.api.v1alpha1.AllocatedDevice;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskState;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * {@code kubectl drover status -o json|yaml}: what the text of {@link AllocStatus} shows, as a document with fixed
 * field names (docs/api.md, "kubectl drover"). Times are RFC 3339 as the API server wrote them, not "ago"; a field the
 * allocation lacks is null, never left out, so a script reads every name on every allocation. Built as a tree, field
 * by field: data binding the model classes would cost the command's start a fifth of a second.
 */
final class AllocStatusJson {

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private AllocStatusJson() {}

    /** @param events the allocation's Kubernetes Events; null when this user may not list them */
    static ObjectNode of(AllocationParts alloc, List<Event> events) {
        ObjectMeta meta = alloc.metadata() != null ? alloc.metadata() : new ObjectMeta();
        AllocationSpec spec = alloc.spec() != null ? alloc.spec() : new AllocationSpec();
        AllocationStatus status = alloc.status();
        ObjectNode out = NODES.objectNode();
        out.put("name", meta.getName());
        out.put("namespace", meta.getNamespace());
        out.put("uid", meta.getUid());
        out.put("node", spec.getNodeName());
        out.put("type", spec.effectiveType().name());
        out.put("previousAllocation", spec.getPreviousAllocation());
        out.put(
                "clientStatus",
                status == null || status.getClientStatus() == null
                        ? null
                        : status.getClientStatus().name());
        out.put("clientDescription", status == null ? null : status.getClientDescription());
        out.put("desiredStatus", spec.effectiveDesiredStatus().name());
        out.put("deletionTimestamp", meta.getDeletionTimestamp());
        out.set("ready", ready(status));
        out.put("generation", meta.getGeneration());
        out.put("observedGeneration", status == null ? null : status.getObservedGeneration());
        out.put("creationTimestamp", meta.getCreationTimestamp());
        ArrayNode devices = out.putArray("devices");
        if (status != null && status.getAllocatedDevices() != null) {
            status.getAllocatedDevices().stream().filter(Objects::nonNull).forEach(d -> devices.add(device(d)));
        }
        Map<String, TaskState> states =
                status == null || status.getTaskStates() == null ? new HashMap<>() : status.getTaskStates();
        ArrayNode tasks = out.putArray("tasks");
        Set<String> shown = new HashSet<>();
        for (Task t : spec.getTasks() == null ? List.<Task>of() : spec.getTasks()) {
            if (t != null) {
                tasks.add(task(t.getName(), t, states.get(t.getName())));
                shown.add(t.getName());
            }
        }
        states.forEach((name, state) -> {
            if (!shown.contains(name)) {
                tasks.add(task(name, null, state));
            }
        });
        if (events == null) {
            out.putNull("events");
        } else {
            ArrayNode list = out.putArray("events");
            NewestFirst.sort(events.stream().filter(Objects::nonNull).toList(), AllocEventsText::timeOf)
                    .forEach(e -> list.add(event(e)));
        }
        return out;
    }

    /** {@code {condition, mainTasksRunning, message}}; null before the agent reports any. */
    private static ObjectNode ready(AllocationStatus status) {
        if (status == null) {
            return null;
        }
        Condition condition = AllocationParts.readyCondition(status);
        if (condition == null && status.getReady() == null) {
            return null;
        }
        ObjectNode ready = NODES.objectNode();
        ready.put("condition", condition == null ? null : condition.getStatus());
        ready.put("mainTasksRunning", status.getReady());
        ready.put("message", condition == null ? null : condition.getMessage());
        return ready;
    }

    private static ObjectNode device(AllocatedDevice d) {
        ObjectNode out = NODES.objectNode();
        out.put("task", d.getTask());
        out.put("vendor", d.getVendor());
        out.put("type", d.getType());
        out.put("model", d.getModel());
        ArrayNode ids = out.putArray("ids");
        if (d.getIds() != null) {
            d.getIds().forEach(ids::add);
        }
        return out;
    }

    /** @param spec the task's spec; null for a task the spec no longer has whose state the agent still reports */
    private static ObjectNode task(String name, Task spec, TaskState state) {
        ObjectNode out = NODES.objectNode();
        out.put("name", name);
        out.put("inSpec", spec != null);
        out.put("leader", spec != null && spec.isLeaderTask());
        out.put(
                "hook",
                spec == null || spec.hook() == null ? null : spec.hook().name().toLowerCase(Locale.ROOT));
        out.put("sidecar", spec != null && spec.isSidecar());
        out.put(
                "state",
                state == null
                        ? "Pending"
                        : state.getState() == null
                                ? "Unknown"
                                : state.getState().name());
        out.put("failed", state != null && Boolean.TRUE.equals(state.getFailed()));
        out.put("restarts", state == null || state.getRestarts() == null ? 0 : state.getRestarts());
        out.put("lastRestart", state == null ? null : state.getLastRestart());
        out.put("startedAt", state == null ? null : state.getStartedAt());
        out.put("finishedAt", state == null ? null : state.getFinishedAt());
        ArrayNode checks = out.putArray("checks");
        if (state != null && state.getChecks() != null) {
            state.getChecks().stream().filter(Objects::nonNull).forEach(c -> checks.add(check(c)));
        }
        ArrayNode events = out.putArray("events");
        if (state != null && state.getEvents() != null) {
            NewestFirst.sort(
                            state.getEvents().stream().filter(Objects::nonNull).toList(),
                            e -> TerminalText.parseTime(e.getTime()))
                    .forEach(e -> events.add(taskEvent(e)));
        }
        return out;
    }

    private static ObjectNode check(CheckStatus c) {
        ObjectNode out = NODES.objectNode();
        out.put("name", c.getName());
        out.put("status", c.getStatus() == null ? null : c.getStatus().name().toLowerCase(Locale.ROOT));
        out.put("since", c.getSince());
        out.put("output", c.getOutput());
        return out;
    }

    /** The event as the allocation's status has it, and {@code description}: the line the text shows. */
    private static ObjectNode taskEvent(TaskEvent e) {
        ObjectNode out = NODES.objectNode();
        out.put("time", e.getTime());
        out.put("type", e.getType() == null ? null : e.getType().name());
        out.put("description", TaskEventText.describe(e));
        out.put("message", e.getMessage());
        out.put("exitCode", e.getExitCode());
        out.put("signal", e.getSignal());
        out.put("oomKilled", e.getOomKilled());
        return out;
    }

    private static ObjectNode event(Event e) {
        ObjectNode out = NODES.objectNode();
        Instant time = AllocEventsText.timeOf(e);
        out.put("time", time == null ? null : time.toString());
        out.put("type", e.getType());
        out.put("reason", e.getReason());
        out.put("count", AllocEventsText.countOf(e));
        out.put("message", e.getMessage());
        return out;
    }
}
