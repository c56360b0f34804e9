package dev.drover.admission;

import java.util.List;
import java.util.Map;

/**
 * Whether an allocation fits on the node beside the ones admitted before it, and the device instances it gets.
 *
 * @param reason  {@link NodeAdmission#OUT_OF_CPU}, {@link NodeAdmission#OUT_OF_MEMORY} or
 *                {@link NodeAdmission#OUT_OF_DEVICES} when refused (kubelet's words), or a host volume's refusal
 *                ({@code UnknownHostVolume}, {@code HostVolumeForbidden}), {@link NodeAdmission#ADMITTED} when
 *                admitted
 * @param message requested and free amounts, for the allocation's condition and Event
 * @param devices when admitted, the instances each of its tasks that asks for devices is to hold, by task name;
 *                empty when refused
 */
public record Decision(boolean admitted, String reason, String message, Map<String, List<Device>> devices) {

    public Decision {
        devices = Map.copyOf(devices);
    }
}
