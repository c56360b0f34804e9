package dev.drover.state;

import java.util.List;

/**
 * Device instances reserved for one task of an allocation; stored so a
 * restarted agent neither loses nor double-books them.
 *
 * @param ids the reserved instances, in the order they were handed to the task
 */
public record DeviceReservation(String task, String vendor, String type, String model, List<String> ids) {

    public DeviceReservation {
        ids = ids == null ? List.of() : List.copyOf(ids);
    }
}
