package dev.drover.cli;

import static dev.drover.cli.TerminalText.NONE;
import static dev.drover.cli.TerminalText.ago;
import static dev.drover.cli.TerminalText.clean;
import static dev.drover.cli.TerminalText.parseTime;
import static dev.drover.cli.TerminalText.utc;

import dev.drover.api.v1alpha1.AllocatedDevice;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskState;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.PrintStream;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Stream;

/**
 * {@code kubectl drover status ALLOC}: an allocation as a person reads it, in
 * the manner of {@code nomad alloc status}. A header of what the agent reports,
 * one section per task (spec order, its recent events newest first), then the
 * Kubernetes Events recorded on the allocation. {@link #render} is pure; every
 * field may be missing and every string is cleaned before it is shown.
 */
final class AllocStatus {

    private AllocStatus() {}

    /**
     * Reads {@code alloc} and its Events through {@code client} and prints their
     * {@link #render}. {@code namespace} null means the client's, else
     * {@code default}. Events the user may not list are left out with a note.
     */
    static void run(KubernetesClient client, String alloc, String namespace, InstantSource clock, PrintStream out)
            throws CommandFailure {
        String ns = namespace != null ? namespace : client.getNamespace() != null ? client.getNamespace() : "default";
        run(new Fabric8Calls(client), alloc, ns, clock, out);
    }

    /** As above, through {@code calls}, in {@code namespace}. */
    static void run(ClusterCalls calls, String alloc, String namespace, InstantSource clock, PrintStream out)
            throws CommandFailure {
        run(calls, alloc, namespace, clock, null, out);
    }

    /** As above; {@code format} {@code json} or {@code yaml}: {@link AllocStatusJson}'s document instead of text. */
    static void run(
            ClusterCalls calls, String alloc, String namespace, InstantSource clock, String format, PrintStream out)
            throws CommandFailure {
        AllocationParts a = calls.allocation(namespace, alloc);
        if (a == null) {
            throw new CommandFailure("allocation " + namespace + "/" + alloc + " not found");
        }
        List<Event> events = eventsOf(calls, a, namespace, alloc);
        out.print(
                format == null
                        ? render(a, events, clock.instant())
                        : Formats.render(AllocStatusJson.of(a, events), format));
    }

    /** The allocation's Events; null when listing Events is forbidden to this user. */
    private static List<Event> eventsOf(ClusterCalls calls, AllocationParts a, String ns, String name)
            throws CommandFailure {
        List<Event> listed = calls.events(ns, name);
        if (listed == null) {
            return null;
        }
        String uid = a.metadata() == null ? null : a.metadata().getUid();
        return listed.stream().filter(e -> isAbout(e.getInvolvedObject(), uid)).toList();
    }

    /**
     * An allocation deleted and created again under the same name has a new uid:
     * its predecessor's Events are not its own. Without uids, the name decides.
     */
    private static boolean isAbout(ObjectReference involved, String uid) {
        return uid == null || involved == null || involved.getUid() == null || uid.equals(involved.getUid());
    }

    /**
     * What {@code kubectl drover status} prints for {@code alloc}.
     *
     * @param events Kubernetes Events on the allocation, in any order; null when they could not be read
     * @param now    the time that "ago" counts from
     */
    static String render(Allocation alloc, List<Event> events, Instant now) {
        return render(AllocationParts.of(alloc), events, now);
    }

    /** As {@link #render(Allocation, List, Instant)}. */
    static String render(AllocationParts alloc, List<Event> events, Instant now) {
        ObjectMeta meta = alloc.metadata() != null ? alloc.metadata() : new ObjectMeta();
        AllocationSpec spec = alloc.spec() != null ? alloc.spec() : new AllocationSpec();
        AllocationStatus status = alloc.status();
        StringBuilder out = new StringBuilder(header(meta, spec, status, now));
        // not Map.of(): a task without a name (a hostile or broken spec) looks itself up as null
        Map<String, TaskState> states =
                status == null || status.getTaskStates() == null ? new HashMap<>() : status.getTaskStates();
        Set<String> shown = new HashSet<>();
        for (Task t : spec.getTasks() == null ? List.<Task>of() : spec.getTasks()) {
            if (t != null) {
                out.append('\n').append(task(t.getName(), marks(t), states.get(t.getName()), now));
                shown.add(t.getName());
            }
        }
        // a task the spec dropped whose state the agent still reports
        states.forEach((name, state) -> {
            if (!shown.contains(name)) {
                out.append('\n').append(task(name, "no longer in the spec", state, now));
            }
        });
        out.append('\n').append(AllocEventsText.render(events, meta));
        return out.toString();
    }

    private static String header(ObjectMeta meta, AllocationSpec spec, AllocationStatus status, Instant now) {
        List<String[]> lines = new ArrayList<>();
        lines.add(pair("Name", clean(meta.getName())));
        lines.add(pair("Namespace", clean(meta.getNamespace())));
        lines.add(pair("UID", clean(meta.getUid())));
        lines.add(pair("Node", clean(spec.getNodeName())));
        lines.add(pair("Type", spec.effectiveType().name()));
        if (spec.getPreviousAllocation() != null) {
            lines.add(pair("Previous Allocation", clean(spec.getPreviousAllocation())));
        }
        if (status == null) {
            lines.add(pair(
                    "Client Status",
                    "(not yet taken on by the node's agent: it may be waiting for a start slot, or not running)"));
        } else {
            lines.add(pair(
                    "Client Status",
                    status.getClientStatus() == null
                            ? NONE
                            : status.getClientStatus().name()));
            lines.add(pair("Client Description", clean(status.getClientDescription())));
        }
        lines.add(pair("Desired Status", spec.effectiveDesiredStatus().name()));
        if (meta.getDeletionTimestamp() != null) {
            lines.add(pair(
                    "Deleting",
                    "requested " + ago(meta.getDeletionTimestamp(), now)
                            + "; waiting for the node's agent to stop its tasks and remove its files"));
        }
        String ready = ready(status);
        if (ready != null) {
            lines.add(pair("Ready", ready));
        }
        if (status != null
                && status.getObservedGeneration() != null
                && meta.getGeneration() != null
                && !status.getObservedGeneration().equals(meta.getGeneration())) {
            lines.add(pair(
                    "Generation",
                    meta.getGeneration() + " (the agent has acted on " + status.getObservedGeneration() + " so far)"));
        }
        lines.add(pair("Created", meta.getCreationTimestamp() == null ? NONE : ago(meta.getCreationTimestamp(), now)));
        if (status != null
                && status.getAllocatedDevices() != null
                && !status.getAllocatedDevices().isEmpty()) {
            lines.add(pair(
                    "Devices",
                    String.join(
                            "\n",
                            status.getAllocatedDevices().stream()
                                    .filter(Objects::nonNull)
                                    .map(AllocStatus::device)
                                    .toList())));
        }
        return TerminalText.keyValues(lines);
    }

    /** {@code True, 2/2 main tasks running}, the Ready condition's message added when it says more. */
    private static String ready(AllocationStatus status) {
        if (status == null) {
            return null;
        }
        Condition condition = AllocationParts.readyCondition(status);
        List<String> parts = new ArrayList<>();
        if (condition != null) {
            parts.add(clean(condition.getStatus()));
        }
        if (status.getReady() != null) {
            parts.add(clean(status.getReady()) + " main tasks running");
        }
        if (parts.isEmpty()) {
            return null;
        }
        String text = String.join(", ", parts);
        if (condition != null
                && condition.getMessage() != null
                && !condition.getMessage().equals(status.getClientDescription())) {
            text += " (" + clean(condition.getMessage()) + ")";
        }
        return text;
    }

    /** {@code web: nvidia/gpu/Tesla T4 [GPU-0, GPU-1]} */
    private static String device(AllocatedDevice d) {
        String name = String.join(
                "/",
                Stream.of(d.getVendor(), d.getType(), d.getModel())
                        .filter(Objects::nonNull)
                        .map(TerminalText::clean)
                        .toList());
        String ids = d.getIds() == null
                ? ""
                : " ["
                        + String.join(
                                ", ",
                                d.getIds().stream().map(TerminalText::clean).toList()) + "]";
        return clean(d.getTask()) + ": " + (name.isEmpty() ? NONE : name) + ids;
    }

    /** {@code leader}, {@code prestart sidecar}, or both; empty for a plain main task. */
    private static String marks(Task t) {
        List<String> marks = new ArrayList<>();
        if (t.isLeaderTask()) {
            marks.add("leader");
        }
        if (t.hook() != null) {
            marks.add(t.hook().name().toLowerCase(Locale.ROOT) + (t.isSidecar() ? " sidecar" : ""));
        }
        return String.join(", ", marks);
    }

    private static String task(String name, String marks, TaskState state, Instant now) {
        StringBuilder out = new StringBuilder("Task \"").append(clean(name)).append('"');
        if (!marks.isEmpty()) {
            out.append(" (").append(marks).append(')');
        }
        if (state == null) {
            return out.append(" is \"Pending\"\nNo events yet\n").toString();
        }
        out.append(" is \"")
                .append(state.getState() == null ? "Unknown" : state.getState().name())
                .append('"');
        if (Boolean.TRUE.equals(state.getFailed())) {
            out.append(" (failed)");
        }
        out.append('\n');
        List<String> times = new ArrayList<>();
        times.add("Restarts = " + (state.getRestarts() == null ? 0 : state.getRestarts()));
        if (state.getLastRestart() != null) {
            times.add("Last Restart = " + ago(state.getLastRestart(), now));
        }
        if (state.getStartedAt() != null) {
            times.add("Started = " + ago(state.getStartedAt(), now));
        }
        if (state.getFinishedAt() != null) {
            times.add("Finished = " + ago(state.getFinishedAt(), now));
        }
        out.append(String.join(", ", times)).append('\n');
        out.append(checks(state, now));
        List<TaskEvent> events = state.getEvents() == null
                ? List.of()
                : state.getEvents().stream().filter(Objects::nonNull).toList();
        if (events.isEmpty()) {
            return out.append("No events yet\n").toString();
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"Time", "Type", "Description"});
        for (TaskEvent e : NewestFirst.sort(events, e -> parseTime(e.getTime()))) {
            rows.add(new String[] {
                e.getTime() == null ? NONE : utc(e.getTime()),
                e.getType() == null ? NONE : e.getType().name(),
                describe(e)
            });
        }
        return out.append("Recent Events:\n").append(TerminalText.columns(rows)).toString();
    }

    /** The task's checks as its agent last reported them, in the spec's order; empty text when it has none. */
    private static String checks(TaskState state, Instant now) {
        List<CheckStatus> checks = state.getChecks() == null
                ? List.of()
                : state.getChecks().stream().filter(Objects::nonNull).toList();
        if (checks.isEmpty()) {
            return "";
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"Check", "Status", "Since", "Output"});
        for (CheckStatus c : checks) {
            rows.add(new String[] {
                clean(c.getName()),
                c.getStatus() == null ? NONE : c.getStatus().name().toLowerCase(Locale.ROOT),
                c.getSince() == null ? NONE : ago(c.getSince(), now),
                c.getOutput() == null || c.getOutput().isEmpty() ? NONE : clean(c.getOutput())
            });
        }
        return "Checks:\n" + TerminalText.columns(rows);
    }

    /** As {@link TaskEventText#describe}. */
    static String describe(TaskEvent e) {
        return TaskEventText.describe(e);
    }

    private static String[] pair(String key, String value) {
        return new String[] {key, value};
    }
}
