package dev.drover.bench;

import dev.drover.api.Timestamps;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** When each allocation of a run was created, taken on, started and seen Running, and the figures from that. */
final class Timeline {

    private Timeline() {}

    /**
     * Per allocation, from the agent seeing it (its tasks' Received events: the agent records them when it takes
     * the allocation on) to every task Started, as the agent's own clock has them in status; sorted.
     */
    static List<Double> seenToRunning(List<Allocation> list) {
        List<Double> out = new ArrayList<>();
        for (Allocation a : list) {
            Span span = Span.of(a);
            if (span.complete()) {
                out.add(Duration.between(span.received(), span.started()).toNanos() / 1e9);
            }
        }
        out.sort(Double::compare);
        return out;
    }

    /**
     * An allocation's first task {@code Received} and last task {@code Started}, as the agent wrote them (null when
     * no task has one); complete when every task has both.
     */
    record Span(Instant received, Instant started, boolean complete) {

        static Span of(Allocation a) {
            Instant received = null;
            Instant started = null;
            boolean complete = a.getStatus() != null && a.getStatus().getTaskStates() != null;
            for (TaskState state : complete ? a.getStatus().getTaskStates().values() : List.<TaskState>of()) {
                Instant r = firstEvent(state, TaskEventType.Received);
                Instant s = firstEvent(state, TaskEventType.Started);
                complete &= r != null && s != null;
                received = r != null && (received == null || r.isBefore(received)) ? r : received;
                started = s != null && (started == null || s.isAfter(started)) ? s : started;
            }
            return new Span(received, started, complete && received != null);
        }
    }

    /**
     * One line per allocation, in milliseconds from the first create: created (its create call returned), received
     * (the agent took it on), started (its last task started), running (the bench's watch saw it Running).
     */
    static void write(
            Path file,
            List<Allocation> listed,
            Map<String, Long> created,
            Map<String, Long> running,
            long begin,
            Instant beginWall)
            throws IOException {
        List<String> lines = new ArrayList<>(List.of("name,createdMs,receivedMs,startedMs,runningMs"));
        for (Allocation a : listed) {
            String name = a.getMetadata().getName();
            Span span = Span.of(a);
            lines.add(name + "," + millis(created.get(name), begin) + "," + millis(span.received(), beginWall) + ","
                    + millis(span.started(), beginWall) + "," + millis(running.get(name), begin));
        }
        Files.write(file, lines);
    }

    static double percentile(List<Double> sorted, double p) {
        if (sorted.isEmpty()) {
            return 0;
        }
        int i = (int) Math.ceil(p * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    private static String millis(Long nanos, long begin) {
        return nanos == null ? "" : Long.toString((nanos - begin) / 1_000_000);
    }

    private static String millis(Instant at, Instant begin) {
        return at == null ? "" : Long.toString(Duration.between(begin, at).toMillis());
    }

    private static Instant firstEvent(TaskState state, TaskEventType type) {
        if (state.getEvents() == null) {
            return null;
        }
        return state.getEvents().stream()
                .filter(e -> e.getType() == type)
                .map(e -> Timestamps.parse(e.getTime()))
                .min(Instant::compareTo)
                .orElse(null);
    }
}
