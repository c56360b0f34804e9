package dev.drover.deviceplugin.nvidia;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/** C layouts and constants of the NVML structs used here, as declared in {@code nvml.h}. */
final class NvmlLayouts {

    private NvmlLayouts() {}

    static final int UUID_BUFFER_SIZE = 96; // NVML_DEVICE_UUID_V2_BUFFER_SIZE
    static final int NAME_BUFFER_SIZE = 96; // NVML_DEVICE_NAME_V2_BUFFER_SIZE
    static final int DRIVER_VERSION_BUFFER_SIZE = 80; // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

    /** nvmlPciInfo_t: 68 bytes. */
    static final StructLayout PCI_INFO = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(16, JAVA_BYTE).withName("busIdLegacy"),
            JAVA_INT.withName("domain"),
            JAVA_INT.withName("bus"),
            JAVA_INT.withName("device"),
            JAVA_INT.withName("pciDeviceId"),
            JAVA_INT.withName("pciSubSystemId"),
            MemoryLayout.sequenceLayout(32, JAVA_BYTE).withName("busId"));

    static final long PCI_BUS_ID = PCI_INFO.byteOffset(groupElement("busId"));

    /** nvmlMemory_t (v1): total, free, used bytes. */
    static final StructLayout MEMORY = MemoryLayout.structLayout(
            JAVA_LONG.withName("total"), JAVA_LONG.withName("free"), JAVA_LONG.withName("used"));

    static final long MEMORY_TOTAL = MEMORY.byteOffset(groupElement("total"));
    static final long MEMORY_USED = MEMORY.byteOffset(groupElement("used"));

    /**
     * nvmlMemory_v2_t: a version word, then total, reserved (the driver's and firmware's own), free and used bytes;
     * used leaves the reserve out (seen on an H200 with driver 580: used 0 and reserved 616 MiB when idle, used the
     * same as nvidia-smi's under load, though some nvml.h versions say it includes it). The version word is
     * NVML_STRUCT_VERSION(Memory, 2): the struct's size with 2 above it.
     */
    static final StructLayout MEMORY_V2 = MemoryLayout.structLayout(
            JAVA_INT.withName("version"),
            MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("total"),
            JAVA_LONG.withName("reserved"),
            JAVA_LONG.withName("free"),
            JAVA_LONG.withName("used"));

    static final int MEMORY_V2_VERSION = (int) MEMORY_V2.byteSize() | (2 << 24);
    static final long MEMORY_V2_TOTAL = MEMORY_V2.byteOffset(groupElement("total"));
    static final long MEMORY_V2_USED = MEMORY_V2.byteOffset(groupElement("used"));

    /** nvmlUtilization_t: percent of the last sample period. */
    static final StructLayout UTILIZATION =
            MemoryLayout.structLayout(JAVA_INT.withName("gpu"), JAVA_INT.withName("memory"));

    static final long UTILIZATION_GPU = UTILIZATION.byteOffset(groupElement("gpu"));
    static final long UTILIZATION_MEMORY = UTILIZATION.byteOffset(groupElement("memory"));

    /** nvmlEventSet_t: a struct holding one pointer, passed by value. */
    static final StructLayout EVENT_SET = MemoryLayout.structLayout(ADDRESS.withName("handle"));

    /** nvmlEventData_t: 32 bytes. */
    static final StructLayout EVENT_DATA = MemoryLayout.structLayout(
            ADDRESS.withName("device"),
            JAVA_LONG.withName("eventType"),
            JAVA_LONG.withName("eventData"),
            JAVA_INT.withName("gpuInstanceId"),
            JAVA_INT.withName("computeInstanceId"));

    static final long EVENT_DEVICE = EVENT_DATA.byteOffset(groupElement("device"));
    static final long EVENT_TYPE = EVENT_DATA.byteOffset(groupElement("eventType"));
    static final long EVENT_XID = EVENT_DATA.byteOffset(groupElement("eventData"));
    static final long EVENT_GPU_INSTANCE = EVENT_DATA.byteOffset(groupElement("gpuInstanceId"));

    // nvmlEventType bits
    static final long EVENT_DOUBLE_BIT_ECC = 0x2L;
    static final long EVENT_XID_CRITICAL = 0x8L;

    /** gpuInstanceId when an event is not attributable to one GPU instance. */
    static final int NO_GPU_INSTANCE = 0xFFFFFFFF;

    static final int TEMPERATURE_GPU = 0; // NVML_TEMPERATURE_GPU
    static final int CLOCK_SM = 1; // NVML_CLOCK_SM
    static final int CLOCK_MEM = 2; // NVML_CLOCK_MEM
    static final int ECC_CORRECTED = 0; // NVML_MEMORY_ERROR_TYPE_CORRECTED
    static final int ECC_UNCORRECTED = 1; // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    static final int ECC_VOLATILE = 0; // NVML_VOLATILE_ECC: since the driver loaded
    static final int MIG_ENABLED = 1; // NVML_DEVICE_MIG_ENABLE
}
