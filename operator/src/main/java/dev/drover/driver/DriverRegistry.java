package dev.drover.driver;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The drivers this agent runs tasks with; raw_exec and exec only when the agent enables them. */
public final class DriverRegistry implements AutoCloseable {

    public static final String RAW_EXEC = "raw_exec";
    public static final String EXEC = "exec";
    private static final List<String> ALL = List.of("mock", RAW_EXEC, EXEC);

    private final Map<String, Driver> drivers = new LinkedHashMap<>();

    public DriverRegistry(List<Driver> enabled) {
        for (Driver d : enabled) {
            drivers.put(d.name(), d);
        }
    }

    public Optional<Driver> find(String name) {
        return Optional.ofNullable(drivers.get(name));
    }

    /**
     * Why a task cannot use {@code name}, or empty when it can: an unknown driver, or
     * one this agent has not enabled (raw_exec and exec are off unless enabled).
     */
    public Optional<String> unavailable(String name) {
        if (drivers.containsKey(name)) {
            return Optional.empty();
        }
        if (name.equals(RAW_EXEC)) {
            return Optional.of("raw_exec is disabled on this agent; start the agent with --enable-raw-exec"
                    + " (it runs tasks as host processes, with the agent's privileges)");
        }
        if (name.equals(EXEC)) {
            return Optional.of("exec is disabled on this agent; start the agent with --enable-exec"
                    + " (it runs tasks as host processes in namespaces of their own, as their own user)");
        }
        return Optional.of("unknown driver \"" + name + "\" (known: " + String.join(", ", ALL) + ")");
    }

    @Override
    public void close() {
        drivers.values().forEach(Driver::close);
    }
}
