package dev.drover.deviceplugin.nvidia;

/** An NVML call returned an error; {@link #code()} is the {@code nvmlReturn_t}. */
final class NvmlException extends Exception {

    static final int SUCCESS = 0;
    static final int ERROR_INVALID_ARGUMENT = 2;
    static final int ERROR_NOT_SUPPORTED = 3;
    static final int ERROR_NOT_FOUND = 6;
    static final int ERROR_DRIVER_NOT_LOADED = 9;
    static final int ERROR_TIMEOUT = 10;
    static final int ERROR_GPU_IS_LOST = 15;
    /** A versioned struct of a version this library does not know. */
    static final int ERROR_ARGUMENT_VERSION_MISMATCH = 25;

    private final int code;
    private final String function;

    NvmlException(String function, int code, String description) {
        super(function + " failed: " + description + " (NVML error " + code + ")");
        this.code = code;
        this.function = function;
    }

    int code() {
        return code;
    }

    String function() {
        return function;
    }

    boolean gpuLost() {
        return code == ERROR_GPU_IS_LOST;
    }
}
