package dev.drover.web;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.Optional;

/** This JVM's options, read through its diagnostic MXBean (which needs no platform MBean server). */
final class VmOptions {

    private VmOptions() {}

    /** The value of the option {@code name}; empty where the JVM is not HotSpot or has no such option. */
    static Optional<String> value(String name) {
        try {
            return Optional.of(ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                    .getVMOption(name)
                    .getValue());
        } catch (RuntimeException notHotSpot) {
            return Optional.empty();
        }
    }
}
