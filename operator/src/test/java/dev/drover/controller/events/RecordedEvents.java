package dev.drover.controller.events;

import io.fabric8.kubernetes.api.model.Event;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** Where an {@link EventRecorder} writes in tests: Events by name, patched as the API server would. */
public final class RecordedEvents implements EventRecorder.Sink {

    private final Map<String, Event> byName = new ConcurrentHashMap<>();
    private final List<Event> created = new CopyOnWriteArrayList<>();

    @Override
    public boolean create(Event event) {
        if (byName.putIfAbsent(event.getMetadata().getName(), event) != null) {
            return false;
        }
        created.add(event);
        return true;
    }

    @Override
    public boolean patch(Event patch) {
        return byName.computeIfPresent(patch.getMetadata().getName(), (name, e) -> {
                    e.setCount(patch.getCount());
                    e.setLastTimestamp(patch.getLastTimestamp());
                    return e;
                })
                != null;
    }

    /** The API server expires an Event. */
    void expire(String name) {
        byName.remove(name);
    }

    /** The Events created, in the order they were. */
    List<Event> created() {
        return List.copyOf(created);
    }

    public List<Event> all() {
        return List.copyOf(byName.values());
    }

    /** The reasons of the Events on the allocation named {@code allocation}. */
    public List<String> reasons(String allocation) {
        return byName.values().stream()
                .filter(e -> allocation.equals(e.getInvolvedObject().getName()))
                .map(Event::getReason)
                .toList();
    }
}
