package dev.drover.controller;

import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.controller.status.StatusWriter;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** Where a {@link StatusWriter} writes in tests: the status last written per allocation. */
final class RecordedStatuses implements StatusWriter.Sink {

    private final Map<AllocId, AllocationStatus> written = new ConcurrentHashMap<>();

    @Override
    public void write(AllocId id, AllocationStatus status) {
        written.put(id, status);
    }

    Optional<AllocationStatus> of(AllocId id) {
        return Optional.ofNullable(written.get(id));
    }

    ClientStatus clientStatus(AllocId id) {
        return of(id).map(AllocationStatus::getClientStatus).orElse(null);
    }

    Optional<Condition> condition(AllocId id, String type) {
        return of(id).flatMap(s ->
                s.getConditions().stream().filter(c -> type.equals(c.getType())).findFirst());
    }
}
