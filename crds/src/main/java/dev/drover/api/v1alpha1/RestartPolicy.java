package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.drover.common.Durations;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.time.Duration;
import java.util.Objects;

/**
 * How often a task may be restarted within an interval, how long to wait before
 * each restart, and what to do when the attempts are used up. Fields left out
 * come from the allocation's policy, then from the defaults of its type.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.attempts) || self.attempts != 0 || !has(self.mode) || self.mode == 'Fail'",
        message = "attempts 0 is only allowed with mode Fail")
@ValidationRule(
        value = "!has(self.interval) || duration(self.interval) >= duration('5s')",
        message = "interval must be at least 5s")
public class RestartPolicy {

    public static final Duration MIN_INTERVAL = Duration.ofSeconds(5);

    /** Service defaults: 2 attempts in 30 minutes, 15 s apart, then fail. */
    public static final Resolved SERVICE_DEFAULT =
            new Resolved(2, Duration.ofMinutes(30), Duration.ofSeconds(15), RestartMode.Fail);
    /** Batch defaults: 3 attempts in 24 hours, 15 s apart, then fail. */
    public static final Resolved BATCH_DEFAULT =
            new Resolved(3, Duration.ofHours(24), Duration.ofSeconds(15), RestartMode.Fail);

    @Min(0)
    @JsonPropertyDescription("Restarts allowed within interval; 0 goes only with mode Fail.")
    private Integer attempts;

    @Pattern(Durations.PATTERN)
    @Size(max = Durations.MAX_LENGTH)
    @JsonPropertyDescription("The window attempts are counted in, as a duration of at least 5s.")
    private String interval;

    @Pattern(Durations.PATTERN)
    @Size(max = Durations.MAX_LENGTH)
    @JsonPropertyDescription("Time to wait before a restart, as a duration.")
    private String delay;

    @JsonPropertyDescription(
            "What happens once the attempts are spent: Fail the task, or Delay until the interval ends and start again.")
    private RestartMode mode;

    public RestartPolicy() {}

    public RestartPolicy(Integer attempts, String interval, String delay, RestartMode mode) {
        this.attempts = attempts;
        this.interval = interval;
        this.delay = delay;
        this.mode = mode;
    }

    public Integer getAttempts() {
        return attempts;
    }

    public void setAttempts(Integer attempts) {
        this.attempts = attempts;
    }

    public String getInterval() {
        return interval;
    }

    public void setInterval(String interval) {
        this.interval = interval;
    }

    public String getDelay() {
        return delay;
    }

    public void setDelay(String delay) {
        this.delay = delay;
    }

    public RestartMode getMode() {
        return mode;
    }

    public void setMode(RestartMode mode) {
        this.mode = mode;
    }

    /** The defaults of an allocation type. */
    public static Resolved defaultFor(AllocationType type) {
        return type == AllocationType.Batch ? BATCH_DEFAULT : SERVICE_DEFAULT;
    }

    /**
     * Field by field: the task's value if given, else the allocation's, else the
     * type's default. Either policy may be null. Assumes validated durations.
     */
    public static Resolved resolve(AllocationType type, RestartPolicy allocation, RestartPolicy task) {
        Resolved d = defaultFor(type);
        Integer attempts = pick(task == null ? null : task.attempts, allocation == null ? null : allocation.attempts);
        String interval = pick(task == null ? null : task.interval, allocation == null ? null : allocation.interval);
        String delay = pick(task == null ? null : task.delay, allocation == null ? null : allocation.delay);
        RestartMode mode = pick(task == null ? null : task.mode, allocation == null ? null : allocation.mode);
        return new Resolved(
                attempts == null ? d.attempts() : attempts,
                interval == null ? d.interval() : Durations.parse(interval),
                delay == null ? d.delay() : Durations.parse(delay),
                mode == null ? d.mode() : mode);
    }

    private static <T> T pick(T first, T second) {
        return first != null ? first : second;
    }

    /** A policy with every field decided. */
    public record Resolved(int attempts, Duration interval, Duration delay, RestartMode mode) {
        public Resolved {
            Objects.requireNonNull(interval, "interval");
            Objects.requireNonNull(delay, "delay");
            Objects.requireNonNull(mode, "mode");
        }

        @Override
        public String toString() {
            return "{attempts: " + attempts + ", interval: " + Durations.format(interval) + ", delay: "
                    + Durations.format(delay) + ", mode: " + mode + "}";
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RestartPolicy p
                && Objects.equals(attempts, p.attempts)
                && Objects.equals(interval, p.interval)
                && Objects.equals(delay, p.delay)
                && mode == p.mode;
    }

    @Override
    public int hashCode() {
        return Objects.hash(attempts, interval, delay, mode);
    }
}
