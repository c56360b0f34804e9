package dev.drover.deviceplugin;

import java.time.Instant;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * One instance's measurements at {@code timestamp}. A value the device cannot report is empty, never zero.
 *
 * @param eccErrorsCorrected   corrected (single-bit) ECC errors since the driver loaded
 * @param eccErrorsUncorrected uncorrected (double-bit) ECC errors since the driver loaded
 */
public record InstanceStats(
        String id,
        Instant timestamp,
        OptionalDouble gpuUtilPercent,
        OptionalDouble memUtilPercent,
        OptionalLong memoryUsedMiB,
        OptionalLong memoryTotalMiB,
        OptionalDouble temperatureC,
        OptionalDouble powerW,
        OptionalLong eccErrorsCorrected,
        OptionalLong eccErrorsUncorrected,
        OptionalLong smClockMHz,
        OptionalLong memoryClockMHz) {

    public InstanceStats {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(timestamp, "timestamp");
        Objects.requireNonNull(gpuUtilPercent, "gpuUtilPercent");
        Objects.requireNonNull(memUtilPercent, "memUtilPercent");
        Objects.requireNonNull(memoryUsedMiB, "memoryUsedMiB");
        Objects.requireNonNull(memoryTotalMiB, "memoryTotalMiB");
        Objects.requireNonNull(temperatureC, "temperatureC");
        Objects.requireNonNull(powerW, "powerW");
        Objects.requireNonNull(eccErrorsCorrected, "eccErrorsCorrected");
        Objects.requireNonNull(eccErrorsUncorrected, "eccErrorsUncorrected");
        Objects.requireNonNull(smClockMHz, "smClockMHz");
        Objects.requireNonNull(memoryClockMHz, "memoryClockMHz");
    }

    /** The same values measured at another time. */
    public InstanceStats withTimestamp(Instant at) {
        return new InstanceStats(
                id,
                at,
                gpuUtilPercent,
                memUtilPercent,
                memoryUsedMiB,
                memoryTotalMiB,
                temperatureC,
                powerW,
                eccErrorsCorrected,
                eccErrorsUncorrected,
                smClockMHz,
                memoryClockMHz);
    }

    public static Builder builder(String id, Instant timestamp) {
        return new Builder(id, timestamp);
    }

    /** Collects the values a device reported; anything not set stays absent. */
    public static final class Builder {
        private final String id;
        private final Instant timestamp;
        private OptionalDouble gpuUtilPercent = OptionalDouble.empty();
        private OptionalDouble memUtilPercent = OptionalDouble.empty();
        private OptionalLong memoryUsedMiB = OptionalLong.empty();
        private OptionalLong memoryTotalMiB = OptionalLong.empty();
        private OptionalDouble temperatureC = OptionalDouble.empty();
        private OptionalDouble powerW = OptionalDouble.empty();
        private OptionalLong eccErrorsCorrected = OptionalLong.empty();
        private OptionalLong eccErrorsUncorrected = OptionalLong.empty();
        private OptionalLong smClockMHz = OptionalLong.empty();
        private OptionalLong memoryClockMHz = OptionalLong.empty();

        private Builder(String id, Instant timestamp) {
            this.id = id;
            this.timestamp = timestamp;
        }

        public Builder gpuUtilPercent(double v) {
            gpuUtilPercent = OptionalDouble.of(v);
            return this;
        }

        public Builder memUtilPercent(double v) {
            memUtilPercent = OptionalDouble.of(v);
            return this;
        }

        public Builder memoryUsedMiB(long v) {
            memoryUsedMiB = OptionalLong.of(v);
            return this;
        }

        public Builder memoryTotalMiB(long v) {
            memoryTotalMiB = OptionalLong.of(v);
            return this;
        }

        public Builder temperatureC(double v) {
            temperatureC = OptionalDouble.of(v);
            return this;
        }

        public Builder powerW(double v) {
            powerW = OptionalDouble.of(v);
            return this;
        }

        public Builder eccErrorsCorrected(long v) {
            eccErrorsCorrected = OptionalLong.of(v);
            return this;
        }

        public Builder eccErrorsUncorrected(long v) {
            eccErrorsUncorrected = OptionalLong.of(v);
            return this;
        }

        public Builder smClockMHz(long v) {
            smClockMHz = OptionalLong.of(v);
            return this;
        }

        public Builder memoryClockMHz(long v) {
            memoryClockMHz = OptionalLong.of(v);
            return this;
        }

        public InstanceStats build() {
            return new InstanceStats(
                    id,
                    timestamp,
                    gpuUtilPercent,
                    memUtilPercent,
                    memoryUsedMiB,
                    memoryTotalMiB,
                    temperatureC,
                    powerW,
                    eccErrorsCorrected,
                    eccErrorsUncorrected,
                    smClockMHz,
                    memoryClockMHz);
        }
    }
}
