package dev.drover.admission;

/**
 * Whether an allocation fits on the node beside the ones admitted before it.
 *
 * @param reason  {@link NodeAdmission#OUT_OF_CPU} or {@link NodeAdmission#OUT_OF_MEMORY} when refused (kubelet's
 *                words), {@link NodeAdmission#ADMITTED} when admitted
 * @param message requested and free amounts, for the allocation's condition and Event
 */
public record Decision(boolean admitted, String reason, String message) {}
