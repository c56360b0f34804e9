package dev.drover.controller.events;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.common.UserText;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Normal task events of each allocation gathered into one Event ({@link TaskEventFilter#FOLDED}): a start of two
 * tasks is one {@code Started} Event naming both rather than six. A fold closes when its allocation had no Normal
 * event for {@link #QUIET}, {@link #MAX_AGE} after it opened, when a Warning of its allocation comes (the recorder
 * closes it first, so the order of Events is kept), or, when {@code limit} are open, as the oldest to make room.
 * A fold keeps the owner's metadata object it was given and task names and types, at most {@link #ENTRIES} of them,
 * and the text of its first task event: a fold of one event alone (a user's exec or signal) is that event's message.
 * Times are the caller's nanosecond ticks; not thread-safe: the recorder guards it.
 */
final class EventFolds {

    /** How long an allocation's fold waits for its next Normal event. */
    static final Duration QUIET = Duration.ofSeconds(1);
    /** How long a fold stays open at most, however often its allocation has Normal events. */
    static final Duration MAX_AGE = Duration.ofSeconds(5);
    /** Task events a fold names; past them it counts the rest. */
    static final int ENTRIES = 32;

    /** One allocation's open fold. */
    static final class Fold {
        final Allocation owner;
        final long opened;
        long lastTick;
        Instant first;
        Instant last;
        private TaskEventType newest;
        private String[] tasks = new String[4];
        private TaskEventType[] types = new TaskEventType[4];
        /** When each event happened (nanoseconds of the epoch): tasks are named in that order, not as told. */
        private long[] times = new long[4];

        private int size;
        private int more;
        /** The text of the fold's first task event: its message when it stays alone (who ran an exec, a signal). */
        private String firstText;

        Fold(Allocation owner, long opened, Instant first) {
            this.owner = owner;
            this.opened = opened;
            this.lastTick = opened;
            this.first = first;
            this.last = first;
        }

        void add(String task, TaskEventType type, String text, Instant time, long tick) {
            if (size == 0) {
                firstText = text;
            }
            lastTick = tick;
            newest = type;
            if (time.isBefore(first)) {
                first = time;
            }
            if (time.isAfter(last)) {
                last = time;
            }
            if (size == ENTRIES) {
                more++;
                return;
            }
            if (size == tasks.length) {
                tasks = Arrays.copyOf(tasks, Math.min(ENTRIES, size * 2));
                types = Arrays.copyOf(types, tasks.length);
                times = Arrays.copyOf(times, tasks.length);
            }
            tasks[size] = task;
            types[size] = type;
            times[size] = time.getEpochSecond() * 1_000_000_000L + time.getNano();
            size++;
        }

        long deadline(long quiet, long maxAge) {
            return Math.min(lastTick + quiet, opened + maxAge);
        }

        /** The newest task event's type: what kubectl shows as the Event's reason. */
        String reason() {
            return newest.name();
        }

        /**
         * Tasks that went through the same types named together, in the order they happened (a task's first event's
         * time, not the order the runners told them: a task's setup is told with its start): {@code Received,
         * TaskSetup, Started: tasks init, web}; {@code Killing, Killed: task web; Restarting (3 times): task db}.
         */
        String message(int limit) {
            if (size == 1 && more == 0 && firstText != null) {
                // one event alone keeps its own words, as with events.taskEvents: all
                return UserText.cut("Task " + tasks[0] + ": " + firstText, limit);
            }
            Integer[] order = new Integer[size];
            Map<String, Long> firstAt = new HashMap<>();
            for (int i = 0; i < size; i++) {
                order[i] = i;
                firstAt.merge(tasks[i], times[i], Math::min);
            }
            Arrays.sort(order, Comparator.comparingLong(i -> firstAt.get(tasks[i]))); // stable: ties as told
            Map<String, List<TaskEventType>> byTask = new LinkedHashMap<>();
            for (int i : order) {
                byTask.computeIfAbsent(tasks[i], t -> new ArrayList<>()).add(types[i]);
            }
            Map<List<TaskEventType>, List<String>> bySequence = new LinkedHashMap<>();
            byTask.forEach((task, seq) ->
                    bySequence.computeIfAbsent(seq, s -> new ArrayList<>()).add(UserText.bare(String.valueOf(task))));
            StringBuilder out = new StringBuilder();
            bySequence.forEach((seq, names) -> {
                if (!out.isEmpty()) {
                    out.append("; ");
                }
                for (int i = 0, run; i < seq.size(); i += run) {
                    run = 1;
                    while (i + run < seq.size() && seq.get(i + run) == seq.get(i)) {
                        run++;
                    }
                    out.append(i == 0 ? "" : ", ").append(seq.get(i).name());
                    out.append(run == 1 ? "" : " (" + run + " times)");
                }
                out.append(names.size() == 1 ? ": task " : ": tasks ").append(UserText.join(names, ", "));
            });
            if (more > 0) {
                out.append("; and ").append(more).append(more == 1 ? " more task event" : " more task events");
            }
            return UserText.cut(out.toString(), limit);
        }
    }

    private final int limit;
    private final long quiet;
    private final long maxAge;
    /** The open folds by key in the order they opened: the head is the first to reach its greatest age. */
    private final Map<String, Fold> byOpening = new LinkedHashMap<>();
    /** The same folds in the order of their newest event: the head is the first to fall quiet. */
    private final Map<String, Fold> byLast = new LinkedHashMap<>(16, 0.75f, true);

    EventFolds(int limit) {
        this(limit, QUIET, MAX_AGE);
    }

    EventFolds(int limit, Duration quiet, Duration maxAge) {
        this.limit = limit;
        this.quiet = quiet.toNanos();
        this.maxAge = maxAge.toNanos();
    }

    /**
     * Adds a Normal task event of the allocation {@code key} to its fold, opening one when it has none; returns the
     * oldest fold when this one made more than {@code limit} open (closed, for the caller to write), else null.
     */
    Fold add(String key, Allocation owner, String task, TaskEventType type, String text, Instant time, long tick) {
        Fold f = byLast.get(key); // moves it to the end: its newest event is now the newest of all
        if (f != null) {
            f.add(task, type, text, time, tick);
            return null;
        }
        f = new Fold(owner, tick, time);
        f.add(task, type, text, time, tick);
        byOpening.put(key, f);
        byLast.put(key, f);
        if (byOpening.size() > limit) {
            return close(byOpening.keySet().iterator().next());
        }
        return null;
    }

    /** Closes the fold of {@code key}, returning it; null when it has none open. */
    Fold close(String key) {
        byLast.remove(key);
        return byOpening.remove(key);
    }

    /** Closes and returns, oldest first, the folds whose time came at {@code tick}. */
    List<Fold> closeDue(long tick) {
        List<Fold> due = new ArrayList<>();
        while (true) {
            Map.Entry<String, Fold> quietest = head(byLast);
            Map.Entry<String, Fold> oldest = head(byOpening);
            if (quietest != null && tick - quietest.getValue().lastTick >= quiet) {
                due.add(close(quietest.getKey()));
            } else if (oldest != null && tick - oldest.getValue().opened >= maxAge) {
                due.add(close(oldest.getKey()));
            } else {
                return due;
            }
        }
    }

    /** The tick at which the next fold closes; {@link Long#MAX_VALUE} when none is open. */
    long nextDeadline() {
        Map.Entry<String, Fold> quietest = head(byLast);
        Map.Entry<String, Fold> oldest = head(byOpening);
        if (quietest == null) {
            return Long.MAX_VALUE;
        }
        return Math.min(
                quietest.getValue().deadline(quiet, maxAge), oldest.getValue().deadline(quiet, maxAge));
    }

    int open() {
        return byOpening.size();
    }

    /** Closes every fold, returning how many were open. */
    int clear() {
        int n = byOpening.size();
        byOpening.clear();
        byLast.clear();
        return n;
    }

    private static Map.Entry<String, Fold> head(Map<String, Fold> folds) {
        return folds.isEmpty() ? null : folds.entrySet().iterator().next();
    }
}
