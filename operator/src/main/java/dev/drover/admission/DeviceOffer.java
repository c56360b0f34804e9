package dev.drover.admission;

import java.util.List;
import java.util.Map;

/**
 * The device instances one allocation may be given: the node's healthy instances no allocation holds, and those its
 * own tasks hold already (an allocation taken on again, or updated, keeps them whatever their health).
 *
 * @param free healthy instances no allocation holds, in the order they are handed out
 * @param held the instances each of the allocation's tasks holds, by task name
 */
public record DeviceOffer(List<Device> free, Map<String, List<Device>> held) {

    /** A node without devices, to an allocation that holds none. */
    public static final DeviceOffer NONE = new DeviceOffer(List.of(), Map.of());

    public DeviceOffer {
        free = List.copyOf(free);
        held = Map.copyOf(held);
    }
}
