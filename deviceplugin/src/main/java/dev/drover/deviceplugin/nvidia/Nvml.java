package dev.drover.deviceplugin.nvidia;

import static dev.drover.deviceplugin.nvidia.NvmlLayouts.EVENT_DATA;
import static dev.drover.deviceplugin.nvidia.NvmlLayouts.EVENT_SET;
import static dev.drover.deviceplugin.nvidia.NvmlLayouts.MEMORY;
import static dev.drover.deviceplugin.nvidia.NvmlLayouts.PCI_INFO;
import static dev.drover.deviceplugin.nvidia.NvmlLayouts.UTILIZATION;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The NVML functions Drover uses, bound with the FFM API. Values a device does not have
 * ({@code NVML_ERROR_NOT_SUPPORTED}, or a function this driver's library lacks) come back empty; other
 * errors throw {@link NvmlException}. Device handles are valid until {@link #shutdown()}. Binding native code
 * is a restricted operation: the JVM needs {@code --enable-native-access=ALL-UNNAMED}.
 */
@SuppressWarnings("restricted")
final class Nvml {

    static final String DEFAULT_LIBRARY = "libnvidia-ml.so.1";
    private static final int FUNCTION_NOT_FOUND = 13;
    private static final int LIBRARY_NOT_FOUND = 12;

    private record Fn(String name, FunctionDescriptor descriptor, boolean required) {}

    private static final FunctionDescriptor RC = FunctionDescriptor.of(JAVA_INT);
    private static final FunctionDescriptor RC_A = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    private static final FunctionDescriptor RC_AA = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
    private static final FunctionDescriptor RC_AAA = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor RC_AI = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);
    private static final FunctionDescriptor RC_AAI = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
    private static final FunctionDescriptor RC_AIA = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);

    private static final List<Fn> FUNCTIONS = List.of(
            new Fn("nvmlInit_v2", RC, true),
            new Fn("nvmlShutdown", RC, true),
            new Fn("nvmlErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT), true),
            new Fn("nvmlDeviceGetCount_v2", RC_A, true),
            new Fn("nvmlDeviceGetHandleByIndex_v2", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS), true),
            new Fn("nvmlDeviceGetUUID", RC_AAI, true),
            new Fn("nvmlDeviceGetName", RC_AAI, true),
            new Fn("nvmlSystemGetDriverVersion", RC_AI, true),
            new Fn("nvmlSystemGetCudaDriverVersion_v2", RC_A, false),
            new Fn("nvmlDeviceGetMemoryInfo", RC_AA, false),
            new Fn("nvmlDeviceGetMemoryInfo_v2", RC_AA, false),
            new Fn("nvmlDeviceGetPciInfo_v3", RC_AA, false),
            new Fn("nvmlDeviceGetPowerManagementLimit", RC_AA, false),
            new Fn("nvmlDeviceGetPowerUsage", RC_AA, false),
            new Fn("nvmlDeviceGetTemperature", RC_AIA, false),
            new Fn("nvmlDeviceGetUtilizationRates", RC_AA, false),
            new Fn("nvmlDeviceGetClockInfo", RC_AIA, false),
            new Fn("nvmlDeviceGetMaxClockInfo", RC_AIA, false),
            new Fn("nvmlDeviceGetCudaComputeCapability", RC_AAA, false),
            new Fn(
                    "nvmlDeviceGetTotalEccErrors",
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS),
                    false),
            new Fn("nvmlDeviceGetMigMode", RC_AAA, false),
            new Fn("nvmlDeviceGetMaxMigDeviceCount", RC_AA, false),
            new Fn("nvmlDeviceGetMigDeviceHandleByIndex", RC_AIA, false),
            new Fn("nvmlDeviceGetGpuInstanceId", RC_AA, false),
            new Fn("nvmlDeviceGetSupportedEventTypes", RC_AA, false),
            new Fn("nvmlEventSetCreate", RC_A, false),
            new Fn("nvmlDeviceRegisterEvents", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, EVENT_SET), false),
            new Fn("nvmlEventSetWait_v2", FunctionDescriptor.of(JAVA_INT, EVENT_SET, ADDRESS, JAVA_INT), false),
            new Fn("nvmlEventSetFree", FunctionDescriptor.of(JAVA_INT, EVENT_SET), false));

    private final String library;
    private final Map<String, MethodHandle> handles;

    private Nvml(String library, Map<String, MethodHandle> handles) {
        this.library = library;
        this.handles = handles;
    }

    /**
     * Opens the library ({@code libnvidia-ml.so.1} is searched the way the dynamic linker searches; a value
     * with a slash is a path) and binds its functions. The library stays loaded for the life of the JVM's
     * references to it (an automatic arena), so no call can ever run into an unloaded library.
     */
    static Nvml load(String library) throws NvmlException {
        Arena arena = Arena.ofAuto();
        SymbolLookup lookup;
        try {
            lookup = library.contains("/")
                    ? SymbolLookup.libraryLookup(Path.of(library), arena)
                    : SymbolLookup.libraryLookup(library, arena);
        } catch (IllegalArgumentException e) {
            throw new NvmlException(
                    "dlopen(" + library + ")",
                    LIBRARY_NOT_FOUND,
                    "NVIDIA driver library not found (" + e.getMessage() + "); install the NVIDIA driver or "
                            + "configure the nvidia plugin's 'library' path");
        }
        Linker linker = Linker.nativeLinker();
        Map<String, MethodHandle> handles = new HashMap<>();
        for (Fn fn : FUNCTIONS) {
            Optional<MemorySegment> symbol = lookup.find(fn.name());
            if (symbol.isPresent()) {
                handles.put(fn.name(), linker.downcallHandle(symbol.get(), fn.descriptor()));
            } else if (fn.required()) {
                throw new NvmlException(
                        fn.name(),
                        FUNCTION_NOT_FOUND,
                        "symbol missing from " + library
                                + "; the NVIDIA driver is too old (Drover needs NVML from driver 450 or newer)");
            }
        }
        return new Nvml(library, handles);
    }

    String library() {
        return library;
    }

    void init() throws NvmlException {
        check("nvmlInit_v2", call("nvmlInit_v2"));
    }

    void shutdown() throws NvmlException {
        check("nvmlShutdown", call("nvmlShutdown"));
    }

    String errorString(int code) {
        try {
            MemorySegment p = (MemorySegment) handles.get("nvmlErrorString").invokeWithArguments(code);
            return p.equals(MemorySegment.NULL)
                    ? "unknown error"
                    : p.reinterpret(1024).getString(0);
        } catch (Throwable t) {
            return "unknown error";
        }
    }

    int deviceCount() throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment count = a.allocate(JAVA_INT);
            check("nvmlDeviceGetCount_v2", call("nvmlDeviceGetCount_v2", count));
            return count.get(JAVA_INT, 0);
        }
    }

    MemorySegment handleByIndex(int index) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            check("nvmlDeviceGetHandleByIndex_v2", call("nvmlDeviceGetHandleByIndex_v2", index, out));
            return out.get(ADDRESS, 0);
        }
    }

    String uuid(MemorySegment device) throws NvmlException {
        return string("nvmlDeviceGetUUID", device, NvmlLayouts.UUID_BUFFER_SIZE);
    }

    String name(MemorySegment device) throws NvmlException {
        return string("nvmlDeviceGetName", device, NvmlLayouts.NAME_BUFFER_SIZE);
    }

    String driverVersion() throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(NvmlLayouts.DRIVER_VERSION_BUFFER_SIZE);
            check(
                    "nvmlSystemGetDriverVersion",
                    call("nvmlSystemGetDriverVersion", buf, NvmlLayouts.DRIVER_VERSION_BUFFER_SIZE));
            return buf.getString(0);
        }
    }

    /** {@code 12.4} from the driver's {@code 12040}. */
    Optional<String> cudaDriverVersion() throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = a.allocate(JAVA_INT);
            if (!present("nvmlSystemGetCudaDriverVersion_v2", v)) return Optional.empty();
            int n = v.get(JAVA_INT, 0);
            return Optional.of(n / 1000 + "." + (n % 1000) / 10);
        }
    }

    record Memory(long totalBytes, long usedBytes) {}

    /**
     * The device's memory, its used part as nvidia-smi shows it: without what the driver and firmware reserve for
     * themselves, which the second version of the call reports apart (an idle H200 with driver 580 reserves 616
     * MiB: used 0 there, where the first version says 615). A library before the second version (R510) gives the
     * first's figure.
     */
    Optional<Memory> memory(MemorySegment device) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v2 = a.allocate(NvmlLayouts.MEMORY_V2);
            v2.set(JAVA_INT, 0, NvmlLayouts.MEMORY_V2_VERSION);
            int rc = call("nvmlDeviceGetMemoryInfo_v2", device, v2);
            if (rc != NvmlException.ERROR_ARGUMENT_VERSION_MISMATCH && present("nvmlDeviceGetMemoryInfo_v2", rc)) {
                return Optional.of(new Memory(
                        v2.get(JAVA_LONG, NvmlLayouts.MEMORY_V2_TOTAL), v2.get(JAVA_LONG, NvmlLayouts.MEMORY_V2_USED)));
            }
            MemorySegment m = a.allocate(MEMORY);
            if (!present("nvmlDeviceGetMemoryInfo", device, m)) return Optional.empty();
            return Optional.of(
                    new Memory(m.get(JAVA_LONG, NvmlLayouts.MEMORY_TOTAL), m.get(JAVA_LONG, NvmlLayouts.MEMORY_USED)));
        }
    }

    Optional<String> pciBusId(MemorySegment device) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pci = a.allocate(PCI_INFO);
            if (!present("nvmlDeviceGetPciInfo_v3", device, pci)) return Optional.empty();
            return Optional.of(pci.asSlice(NvmlLayouts.PCI_BUS_ID, 32).getString(0));
        }
    }

    OptionalLong powerLimitMilliwatts(MemorySegment device) throws NvmlException {
        return uint("nvmlDeviceGetPowerManagementLimit", device);
    }

    OptionalLong powerUsageMilliwatts(MemorySegment device) throws NvmlException {
        return uint("nvmlDeviceGetPowerUsage", device);
    }

    OptionalLong temperatureC(MemorySegment device) throws NvmlException {
        return uint("nvmlDeviceGetTemperature", device, NvmlLayouts.TEMPERATURE_GPU);
    }

    OptionalLong clockMHz(MemorySegment device, int clockType) throws NvmlException {
        return uint("nvmlDeviceGetClockInfo", device, clockType);
    }

    OptionalLong maxClockMHz(MemorySegment device, int clockType) throws NvmlException {
        return uint("nvmlDeviceGetMaxClockInfo", device, clockType);
    }

    record Utilization(int gpuPercent, int memoryPercent) {}

    Optional<Utilization> utilization(MemorySegment device) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment u = a.allocate(UTILIZATION);
            if (!present("nvmlDeviceGetUtilizationRates", device, u)) return Optional.empty();
            return Optional.of(new Utilization(
                    u.get(JAVA_INT, NvmlLayouts.UTILIZATION_GPU), u.get(JAVA_INT, NvmlLayouts.UTILIZATION_MEMORY)));
        }
    }

    /** {@code 8.0}. */
    Optional<String> computeCapability(MemorySegment device) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment major = a.allocate(JAVA_INT);
            MemorySegment minor = a.allocate(JAVA_INT);
            if (!present("nvmlDeviceGetCudaComputeCapability", device, major, minor)) return Optional.empty();
            return Optional.of(major.get(JAVA_INT, 0) + "." + minor.get(JAVA_INT, 0));
        }
    }

    /** Volatile (since the driver loaded) ECC error count of one type. */
    OptionalLong totalEccErrors(MemorySegment device, int errorType) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment n = a.allocate(JAVA_LONG);
            if (!present("nvmlDeviceGetTotalEccErrors", device, errorType, NvmlLayouts.ECC_VOLATILE, n)) {
                return OptionalLong.empty();
            }
            return OptionalLong.of(n.get(JAVA_LONG, 0));
        }
    }

    boolean migEnabled(MemorySegment device) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment current = a.allocate(JAVA_INT);
            MemorySegment pending = a.allocate(JAVA_INT);
            return present("nvmlDeviceGetMigMode", device, current, pending)
                    && current.get(JAVA_INT, 0) == NvmlLayouts.MIG_ENABLED;
        }
    }

    int maxMigDeviceCount(MemorySegment device) throws NvmlException {
        return (int) uint("nvmlDeviceGetMaxMigDeviceCount", device).orElse(0);
    }

    /** The MIG device at {@code index}, or empty where no MIG device is configured at that index. */
    Optional<MemorySegment> migDeviceHandle(MemorySegment device, int index) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            int rc = call("nvmlDeviceGetMigDeviceHandleByIndex", device, index, out);
            if (rc == NvmlException.ERROR_NOT_FOUND || rc == NvmlException.ERROR_INVALID_ARGUMENT) {
                return Optional.empty();
            }
            return present("nvmlDeviceGetMigDeviceHandleByIndex", rc)
                    ? Optional.of(out.get(ADDRESS, 0))
                    : Optional.empty();
        }
    }

    OptionalInt gpuInstanceId(MemorySegment migDevice) throws NvmlException {
        OptionalLong id = uint("nvmlDeviceGetGpuInstanceId", migDevice);
        return id.isPresent() ? OptionalInt.of((int) id.getAsLong()) : OptionalInt.empty();
    }

    long supportedEventTypes(MemorySegment device) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment types = a.allocate(JAVA_LONG);
            return present("nvmlDeviceGetSupportedEventTypes", device, types) ? types.get(JAVA_LONG, 0) : 0L;
        }
    }

    /** A new event set, or empty when this library has no events. Free it with {@link #freeEventSet}. */
    Optional<MemorySegment> createEventSet(Arena arena) throws NvmlException {
        MemorySegment set = arena.allocate(EVENT_SET);
        return present("nvmlEventSetCreate", set) ? Optional.of(set) : Optional.empty();
    }

    /** Registers for {@code types}; false when the device does not support events. */
    boolean registerEvents(MemorySegment device, long types, MemorySegment set) throws NvmlException {
        return present("nvmlDeviceRegisterEvents", device, types, set);
    }

    record Event(MemorySegment device, long type, long xid, int gpuInstanceId) {}

    /** The next event, or empty when none came within {@code timeoutMillis}. */
    Optional<Event> waitEvent(MemorySegment set, int timeoutMillis) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment data = a.allocate(EVENT_DATA);
            int rc = call("nvmlEventSetWait_v2", set, data, timeoutMillis);
            if (rc == NvmlException.ERROR_TIMEOUT) return Optional.empty();
            check("nvmlEventSetWait_v2", rc);
            return Optional.of(new Event(
                    data.get(ADDRESS, NvmlLayouts.EVENT_DEVICE),
                    data.get(JAVA_LONG, NvmlLayouts.EVENT_TYPE),
                    data.get(JAVA_LONG, NvmlLayouts.EVENT_XID),
                    data.get(JAVA_INT, NvmlLayouts.EVENT_GPU_INSTANCE)));
        }
    }

    void freeEventSet(MemorySegment set) throws NvmlException {
        check("nvmlEventSetFree", call("nvmlEventSetFree", set));
    }

    private String string(String fn, MemorySegment device, int size) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(size);
            check(fn, call(fn, device, buf, size));
            return buf.getString(0);
        }
    }

    private OptionalLong uint(String fn, Object... args) throws NvmlException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            Object[] all = java.util.Arrays.copyOf(args, args.length + 1);
            all[args.length] = out;
            if (!present(fn, all)) return OptionalLong.empty();
            return OptionalLong.of(Integer.toUnsignedLong(out.get(JAVA_INT, 0)));
        }
    }

    private boolean present(String fn, Object... args) throws NvmlException {
        return present(fn, call(fn, args));
    }

    /** True on success; false where the device or the library lacks the value; throws otherwise. */
    private boolean present(String fn, int rc) throws NvmlException {
        if (rc == NvmlException.ERROR_NOT_SUPPORTED || rc == FUNCTION_NOT_FOUND) return false;
        check(fn, rc);
        return true;
    }

    private void check(String fn, int rc) throws NvmlException {
        if (rc != NvmlException.SUCCESS) {
            throw new NvmlException(fn, rc, errorString(rc));
        }
    }

    private int call(String fn, Object... args) {
        MethodHandle h = handles.get(fn);
        if (h == null) {
            return FUNCTION_NOT_FOUND;
        }
        try {
            return (int) h.invokeWithArguments(args);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("calling " + fn + " in " + library, t);
        }
    }
}
