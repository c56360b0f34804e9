package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.drover.api.v1alpha1.AllocatedDevice;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.Lifecycle;
import dev.drover.api.v1alpha1.LifecycleHook;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventSeries;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectReference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * An allocation and its Events, from the API server's JSON (a Jackson tree) into the model classes that {@link
 * AllocStatus} and {@link AllocRestart} read: only the fields they show. Jackson's data binding would make a
 * deserializer for every class of the model, reading its annotations, a fifth of a second at each start; reading the
 * tree costs next to nothing. A field of the wrong type is left out, as one that is missing; so is an enum value this
 * version does not know. {@code AllocationJsonTest} checks that what is shown equals what data binding gives.
 */
final class AllocationJson {

    private AllocationJson() {}

    static AllocationParts allocation(JsonNode a) {
        return new AllocationParts(
                a.path("metadata").isObject() ? meta(a.path("metadata")) : null,
                a.path("spec").isObject() ? spec(a.path("spec")) : null,
                a.path("status").isObject() ? status(a.path("status")) : null);
    }

    static List<Event> events(JsonNode list) {
        return each(list.path("items"), AllocationJson::event);
    }

    private static ObjectMeta meta(JsonNode m) {
        ObjectMeta meta = new ObjectMeta();
        meta.setName(text(m, "name"));
        meta.setNamespace(text(m, "namespace"));
        meta.setUid(text(m, "uid"));
        meta.setGeneration(
                m.path("generation").canConvertToLong() ? m.path("generation").asLong() : null);
        meta.setCreationTimestamp(text(m, "creationTimestamp"));
        meta.setDeletionTimestamp(text(m, "deletionTimestamp"));
        meta.setResourceVersion(text(m, "resourceVersion"));
        return meta;
    }

    private static AllocationSpec spec(JsonNode s) {
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(text(s, "nodeName"));
        spec.setType(constant(AllocationType.class, text(s, "type")));
        spec.setDesiredStatus(constant(DesiredStatus.class, text(s, "desiredStatus")));
        spec.setPreviousAllocation(text(s, "previousAllocation"));
        spec.setTasks(s.path("tasks").isArray() ? each(s.path("tasks"), AllocationJson::task) : null);
        return spec;
    }

    private static Task task(JsonNode t) {
        Task task = new Task();
        task.setName(text(t, "name"));
        task.setDriver(text(t, "driver"));
        task.setLeader(bool(t, "leader"));
        JsonNode l = t.path("lifecycle");
        if (l.isObject()) {
            task.setLifecycle(new Lifecycle(constant(LifecycleHook.class, text(l, "hook")), bool(l, "sidecar")));
        }
        return task;
    }

    private static AllocationStatus status(JsonNode s) {
        AllocationStatus status = new AllocationStatus();
        status.setClientStatus(constant(ClientStatus.class, text(s, "clientStatus")));
        status.setClientDescription(text(s, "clientDescription"));
        status.setObservedGeneration(
                s.path("observedGeneration").canConvertToLong()
                        ? s.path("observedGeneration").asLong()
                        : null);
        status.setReady(text(s, "ready"));
        status.setRestarts(integer(s, "restarts"));
        if (s.path("conditions").isArray()) {
            status.setConditions(each(s.path("conditions"), AllocationJson::condition));
        }
        if (s.path("allocatedDevices").isArray()) {
            status.setAllocatedDevices(each(s.path("allocatedDevices"), AllocationJson::device));
        }
        if (s.path("taskStates").isObject()) {
            Map<String, TaskState> states = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> e : s.path("taskStates").properties()) {
                if (e.getValue().isObject()) {
                    states.put(e.getKey(), taskState(e.getValue()));
                }
            }
            status.setTaskStates(states);
        }
        return status;
    }

    private static Condition condition(JsonNode c) {
        Condition condition = new Condition();
        condition.setType(text(c, "type"));
        condition.setStatus(text(c, "status"));
        condition.setReason(text(c, "reason"));
        condition.setMessage(text(c, "message"));
        condition.setLastTransitionTime(text(c, "lastTransitionTime"));
        return condition;
    }

    private static AllocatedDevice device(JsonNode d) {
        AllocatedDevice device = new AllocatedDevice();
        device.setTask(text(d, "task"));
        device.setVendor(text(d, "vendor"));
        device.setType(text(d, "type"));
        device.setModel(text(d, "model"));
        device.setIds(d.path("ids").isArray() ? each(d.path("ids"), id -> id.isTextual() ? id.asText() : null) : null);
        return device;
    }

    private static TaskState taskState(JsonNode t) {
        TaskState state = new TaskState();
        state.setState(constant(TaskState.State.class, text(t, "state")));
        state.setFailed(bool(t, "failed"));
        state.setRestarts(integer(t, "restarts"));
        state.setLastRestart(text(t, "lastRestart"));
        state.setStartedAt(text(t, "startedAt"));
        state.setFinishedAt(text(t, "finishedAt"));
        if (t.path("events").isArray()) {
            state.setEvents(each(t.path("events"), AllocationJson::taskEvent));
        }
        if (t.path("checks").isArray()) {
            state.setChecks(each(t.path("checks"), AllocationJson::check));
        }
        return state;
    }

    private static TaskEvent taskEvent(JsonNode e) {
        TaskEvent event = new TaskEvent();
        event.setType(constant(TaskEventType.class, text(e, "type")));
        event.setTime(text(e, "time"));
        event.setMessage(text(e, "message"));
        event.setExitCode(integer(e, "exitCode"));
        event.setSignal(text(e, "signal"));
        event.setOomKilled(bool(e, "oomKilled"));
        event.setStartDelay(text(e, "startDelay"));
        event.setRestartReason(text(e, "restartReason"));
        event.setKillTimeout(text(e, "killTimeout"));
        event.setKillError(text(e, "killError"));
        event.setFailedSibling(text(e, "failedSibling"));
        event.setValidationError(text(e, "validationError"));
        event.setDriverError(text(e, "driverError"));
        event.setCheck(text(e, "check"));
        event.setCheckStatus(constant(CheckStatus.Status.class, text(e, "checkStatus")));
        return event;
    }

    private static CheckStatus check(JsonNode c) {
        CheckStatus check = new CheckStatus();
        check.setName(text(c, "name"));
        check.setStatus(constant(CheckStatus.Status.class, text(c, "status")));
        check.setOutput(text(c, "output"));
        check.setSince(text(c, "since"));
        return check;
    }

    private static Event event(JsonNode e) {
        Event event = new Event();
        event.setMetadata(e.path("metadata").isObject() ? meta(e.path("metadata")) : null);
        event.setType(text(e, "type"));
        event.setReason(text(e, "reason"));
        event.setMessage(text(e, "message"));
        event.setCount(integer(e, "count"));
        event.setFirstTimestamp(text(e, "firstTimestamp"));
        event.setLastTimestamp(text(e, "lastTimestamp"));
        event.setEventTime(text(e, "eventTime") == null ? null : new MicroTime(text(e, "eventTime")));
        JsonNode series = e.path("series");
        if (series.isObject()) {
            EventSeries s = new EventSeries();
            s.setCount(integer(series, "count"));
            s.setLastObservedTime(
                    text(series, "lastObservedTime") == null ? null : new MicroTime(text(series, "lastObservedTime")));
            event.setSeries(s);
        }
        JsonNode involved = e.path("involvedObject");
        if (involved.isObject()) {
            ObjectReference ref = new ObjectReference();
            ref.setKind(text(involved, "kind"));
            ref.setName(text(involved, "name"));
            ref.setNamespace(text(involved, "namespace"));
            ref.setUid(text(involved, "uid"));
            event.setInvolvedObject(ref);
        }
        return event;
    }

    private static <T> List<T> each(JsonNode array, Function<JsonNode, T> read) {
        List<T> items = new ArrayList<>();
        for (JsonNode item : array) {
            // as data binding does: a null item stays null (AllocStatus passes over them)
            items.add(item.isNull() ? null : read.apply(item));
        }
        return items;
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.path(field);
        return v.isValueNode() && !v.isNull() ? v.asText() : null;
    }

    private static Boolean bool(JsonNode n, String field) {
        JsonNode v = n.path(field);
        return v.isBoolean() ? v.asBoolean() : null;
    }

    private static Integer integer(JsonNode n, String field) {
        JsonNode v = n.path(field);
        return v.canConvertToInt() ? v.asInt() : null;
    }

    /** The constant named {@code name}, in any case ({@code passing} is PASSING); null for one unknown here. */
    private static <E extends Enum<E>> E constant(Class<E> type, String name) {
        if (name == null) {
            return null;
        }
        for (E e : type.getEnumConstants()) {
            if (e.name().equalsIgnoreCase(name)) {
                return e;
            }
        }
        return null;
    }
}
