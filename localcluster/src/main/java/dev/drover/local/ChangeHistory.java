package dev.drover.local;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The window of recent changes an {@link ObjectStore} keeps, and the watches fed from it: each change is recorded
 * and offered to every registered watch that wants it; the oldest go once the window is over its count or its bytes,
 * and a watch from a revision that went with them is refused with 410 Gone. The store calls it under its own lock;
 * a watch may leave from any thread.
 */
final class ChangeHistory {

    /** The watch history keeps at most this many bytes of changes (and {@code historySize} changes). */
    static final long MAX_HISTORY_BYTES = 64L << 20;

    private final int historySize;
    private final ArrayDeque<ObjectStore.Change> history = new ArrayDeque<>();
    /** The serialized size of each change in {@link #history}, in the same order, and their sum. */
    private final ArrayDeque<Integer> historySizes = new ArrayDeque<>();

    private long historyBytes;
    private final List<ObjectStore.Watch> watches = new CopyOnWriteArrayList<>();
    /** The newest revision no longer in {@link #history}: watches from before it get 410 Gone. */
    private long compacted;

    ChangeHistory(int historySize) {
        this.historySize = historySize;
    }

    /** Keeps {@code change} ({@code size} bytes serialized) and offers it to the watches that want it. */
    void record(ObjectStore.Change change, int size) {
        history.addLast(change);
        historySizes.addLast(size);
        historyBytes += size;
        // bounded in entries and in bytes: a few large objects written often must not fill the heap
        while (history.size() > historySize || (historyBytes > MAX_HISTORY_BYTES && history.size() > 1)) {
            compacted = history.removeFirst().revision();
            historyBytes -= historySizes.removeFirst();
        }
        for (ObjectStore.Watch w : watches) {
            if (w.wants(change)) {
                w.offer(change);
            }
        }
    }

    /** Offers {@code w} the kept changes after {@code since} it wants; 410 Gone when some of them are no longer kept. */
    void replay(ObjectStore.Watch w, long since) {
        if (since < compacted) {
            throw new ApiFront.ApiError(410, "Expired", "too old resource version: " + since + " (" + compacted + ")");
        }
        for (ObjectStore.Change c : history) {
            if (c.revision() > since && w.wants(c)) {
                w.offer(c);
            }
        }
    }

    /** From now on {@code w} is offered every change it wants. */
    void register(ObjectStore.Watch w) {
        watches.add(w);
    }

    void unregister(ObjectStore.Watch w) {
        watches.remove(w);
    }
}
