package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * Objects deleted in the last minute, per resource type. The store's watch
 * starts only after a handshake, so a deletion in that gap would never reach
 * a watcher that listed the object just before (kubectl delete --wait then
 * hangs); watches replay these as DELETED events.
 */
final class RecentDeletions {

    private static final Duration KEEP = Duration.ofMinutes(1);

    private record Deleted(long atNanos, String type, JsonNode object) {
    }

    private final Deque<Deleted> deleted = new ArrayDeque<>();

    synchronized void record(ResourceType type, JsonNode object) {
        expire();
        deleted.addLast(new Deleted(System.nanoTime(), key(type), object));
    }

    synchronized List<JsonNode> of(ResourceType type) {
        expire();
        String key = key(type);
        return deleted.stream().filter(d -> d.type().equals(key)).map(Deleted::object).toList();
    }

    private void expire() {
        long oldest = System.nanoTime() - KEEP.toNanos();
        while (!deleted.isEmpty() && deleted.peekFirst().atNanos() < oldest) {
            deleted.removeFirst();
        }
    }

    private static String key(ResourceType type) {
        return type.group() + "/" + type.plural();
    }
}
