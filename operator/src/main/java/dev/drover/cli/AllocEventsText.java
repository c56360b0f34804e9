package dev.drover.cli;

import static dev.drover.cli.TerminalText.NONE;
import static dev.drover.cli.TerminalText.clean;
import static dev.drover.cli.TerminalText.parseTime;
import static dev.drover.cli.TerminalText.utc;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventSeries;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** The Kubernetes Events recorded on an allocation, as {@code kubectl drover status} ends with them. */
final class AllocEventsText {

    /** Kubernetes Events shown, newest first; the rest are counted. */
    static final int MAX_KUBERNETES_EVENTS = 10;

    private AllocEventsText() {}

    /** The Events section: newest first, at most {@link #MAX_KUBERNETES_EVENTS}, the rest counted. */
    static String render(List<Event> events, ObjectMeta meta) {
        if (events == null) {
            return "Events:\nNot shown: you may not list Events in namespace " + clean(meta.getNamespace()) + "\n";
        }
        List<Event> all = events.stream().filter(Objects::nonNull).toList();
        if (all.isEmpty()) {
            return "Events:\nNone (the API server keeps Events for an hour by default)\n";
        }
        List<Event> shown = NewestFirst.sort(all, AllocEventsText::timeOf).stream()
                .limit(MAX_KUBERNETES_EVENTS)
                .toList();
        boolean counted = shown.stream().anyMatch(e -> countOf(e) > 1);
        List<String[]> rows = new ArrayList<>();
        rows.add(
                counted
                        ? new String[] {"Time", "Type", "Reason", "Count", "Message"}
                        : new String[] {"Time", "Type", "Reason", "Message"});
        for (Event e : shown) {
            Instant t = timeOf(e);
            String time = t == null ? NONE : utc(t);
            rows.add(
                    counted
                            ? new String[] {
                                time,
                                clean(e.getType()),
                                clean(e.getReason()),
                                Integer.toString(countOf(e)),
                                clean(e.getMessage())
                            }
                            : new String[] {time, clean(e.getType()), clean(e.getReason()), clean(e.getMessage())});
        }
        StringBuilder out = new StringBuilder("Events:\n").append(TerminalText.columns(rows));
        if (all.size() > shown.size()) {
            out.append("(")
                    .append(all.size() - shown.size())
                    .append(" older not shown: kubectl get events -n ")
                    .append(clean(meta.getNamespace()))
                    .append(" --field-selector involvedObject.name=")
                    .append(clean(meta.getName()))
                    .append(")\n");
        }
        return out.toString();
    }

    /** When the Event last happened: a repeat's time, else its single time, else its first. */
    static Instant timeOf(Event e) {
        EventSeries series = e.getSeries();
        String repeated = series == null ? null : micro(series.getLastObservedTime());
        for (String candidate :
                new String[] {e.getLastTimestamp(), repeated, micro(e.getEventTime()), e.getFirstTimestamp()}) {
            Instant t = parseTime(candidate);
            if (t != null) {
                return t;
            }
        }
        return null;
    }

    private static String micro(MicroTime t) {
        return t == null ? null : t.getTime();
    }

    static int countOf(Event e) {
        if (e.getCount() != null) {
            return e.getCount();
        }
        return e.getSeries() != null && e.getSeries().getCount() != null
                ? e.getSeries().getCount()
                : 1;
    }
}
