package dev.drover.state;

import dev.drover.api.v1alpha1.Allocation;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;

/**
 * Everything the store holds for one allocation, as read for restore.
 *
 * @param spec        the spec snapshot; empty when a crash left entries of an allocation whose spec was
 *                    never written (the runner cannot run it and should delete it), or when it could not
 *                    be read ({@code damaged})
 * @param tasks       by task name
 * @param ports       the host ports it holds, by port name; empty when none
 * @param network     its network as its agent set it up, as {@link StateDB#putNetwork} stored it; empty when none
 * @param damaged     an entry of it could not be read and was quarantined: what it held is lost, so the
 *                    allocation is taken on again from the API server, its directory kept (a task still
 *                    running there is taken over, not started twice)
 */
public record StoredAllocation(
        AllocId id,
        Optional<Allocation> spec,
        Optional<AllocRunnerState> state,
        List<DeviceReservation> devices,
        Map<String, Integer> ports,
        Optional<String> network,
        SortedMap<String, StoredTask> tasks,
        boolean damaged) {

    public StoredAllocation {
        ports = Map.copyOf(ports);
    }
}
