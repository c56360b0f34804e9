package dev.drover.metrics;

import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import dev.drover.api.v1alpha1.TaskState;
import io.prometheus.client.Collector;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.GaugeMetricFamily;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The checks of the tasks the agent runs: {@code drover_check_status} (1 for each check's current status, 0 for the
 * other two) and {@code drover_check_transitions_total} (its status changes, by the status it changed to). An
 * allocation's series go once all its tasks are dead, so gone allocations leave none behind.
 */
public final class CheckMetrics extends Collector {

    static final String STATUS = "drover_check_status";
    static final String TRANSITIONS = "drover_check_transitions";

    /** How many ended allocations are remembered, so that a late, older state does not bring their series back. */
    private static final int ENDED_KEPT = 10_000;

    private record Alloc(String namespace, String name) {}

    private record Series(String task, String check) {}

    /** One allocation's series, as of its state's {@code version}. */
    private static final class Entry {
        final String uid;
        long version = -1;
        Map<Series, Status> statuses = Map.of();
        final Map<Series, Map<Status, Long>> transitions = new LinkedHashMap<>();

        Entry(String uid) {
            this.uid = uid;
        }
    }

    /** The last state of an ended allocation: older ones of the same allocation (its uid) change nothing. */
    private record Ended(String uid, long version) {}

    private final Map<Alloc, Entry> entries = new HashMap<>();
    private final Map<Alloc, Ended> ended = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Alloc, Ended> eldest) {
            return size() > ENDED_KEPT;
        }
    };

    /**
     * An allocation's tasks' states as of {@code version} (of the allocation {@code uid}: one created again under the
     * same name counts its versions afresh): the checks of its running tasks are its series now; an allocation whose
     * tasks are all dead has none any more. An older state than one seen already changes nothing.
     */
    public synchronized void states(
            String namespace, String name, String uid, long version, Map<String, TaskState> tasks) {
        Alloc key = new Alloc(namespace, name);
        Ended end = ended.get(key);
        if (end != null && Objects.equals(end.uid(), uid) && version <= end.version()) {
            return;
        }
        Entry e = entries.get(key);
        if (e != null && !Objects.equals(e.uid, uid)) {
            entries.remove(key); // the name's earlier allocation: its series go with it
            e = null;
        }
        if (e != null && version < e.version) {
            return;
        }
        boolean allDead =
                !tasks.isEmpty() && tasks.values().stream().allMatch(s -> s.getState() == TaskState.State.Dead);
        if (allDead) {
            entries.remove(key);
            ended.put(key, new Ended(uid, version));
            return;
        }
        ended.remove(key); // a name used again
        Map<Series, Status> now = new LinkedHashMap<>();
        tasks.forEach((task, s) -> {
            if (s.getState() == TaskState.State.Running && s.getChecks() != null) {
                for (CheckStatus c : s.getChecks()) {
                    if (c.getName() != null && c.getStatus() != null) {
                        now.put(new Series(task, c.getName()), c.getStatus());
                    }
                }
            }
        });
        if (e == null) {
            if (now.isEmpty()) {
                return;
            }
            e = new Entry(uid);
            entries.put(key, e);
        }
        e.version = version;
        e.statuses = now;
    }

    /** A check of a task of the allocation {@code uid} changed to {@code to}. */
    public synchronized void transition(
            String namespace, String name, String uid, String task, String check, Status to) {
        Alloc key = new Alloc(namespace, name);
        Ended end = ended.get(key);
        Entry e = entries.get(key);
        if ((end != null && Objects.equals(end.uid(), uid))
                || (e != null && !Objects.equals(e.uid, uid))
                || to == null
                || check == null) {
            return;
        }
        entries.computeIfAbsent(key, k -> new Entry(uid))
                .transitions
                .computeIfAbsent(new Series(task, check), s -> new LinkedHashMap<>())
                .merge(to, 1L, Long::sum);
    }

    @Override
    public synchronized List<MetricFamilySamples> collect() {
        GaugeMetricFamily status = new GaugeMetricFamily(
                STATUS,
                "1 for the status each check of a running task has now (passing, warning, critical), 0 for the others.",
                List.of("namespace", "allocation", "task", "check", "status"));
        CounterMetricFamily transitions = new CounterMetricFamily(
                TRANSITIONS,
                "Status changes of tasks' checks, by the status changed to.",
                List.of("namespace", "allocation", "task", "check", "to"));
        entries.forEach((alloc, e) -> {
            e.statuses.forEach((series, now) -> {
                for (Status s : Status.values()) {
                    status.addMetric(
                            List.of(alloc.namespace(), alloc.name(), series.task(), series.check(), lower(s)),
                            s == now ? 1 : 0);
                }
            });
            e.transitions.forEach((series, counts) -> counts.forEach((to, n) -> transitions.addMetric(
                    List.of(alloc.namespace(), alloc.name(), series.task(), series.check(), lower(to)), n)));
        });
        List<MetricFamilySamples> out = new ArrayList<>();
        out.add(status);
        out.add(transitions);
        return out;
    }

    private static String lower(Status s) {
        return s.name().toLowerCase(Locale.ROOT);
    }
}
