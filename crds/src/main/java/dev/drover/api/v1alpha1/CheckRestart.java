package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.drover.common.Durations;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import java.time.Duration;
import java.util.Objects;

/**
 * When failing checks restart their task, as Nomad's {@code check_restart}: after {@code limit} unhealthy probe
 * results in a row of one check, counting only those later than {@code grace} after the task (re)started. The
 * restart goes through the restart policy and counts against it. {@code limit} 0 (the default) never restarts;
 * {@code ignoreWarnings} counts a warning as healthy.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CheckRestart {

    static final String DEFAULT_GRACE_TEXT = "1s";
    public static final Duration DEFAULT_GRACE = Durations.parse(DEFAULT_GRACE_TEXT);
    public static final int MAX_LIMIT = 100;

    @Min(0)
    @Max(MAX_LIMIT)
    @Default("0")
    @JsonPropertyDescription(
            "Unhealthy results in a row of one check that restart the task, 0 to 100; 0 never restarts.")
    private Integer limit;

    @Pattern(Durations.PATTERN)
    @Size(max = Durations.MAX_LENGTH)
    @Default(DEFAULT_GRACE_TEXT)
    @JsonPropertyDescription(
            "Time after the task (re)starts during which results do not count, as a duration; 1s when not given.")
    private String grace;

    @Default("false")
    @JsonPropertyDescription("Whether warning results do not count as unhealthy; false when not given.")
    private Boolean ignoreWarnings;

    public CheckRestart() {}

    public CheckRestart(Integer limit, String grace, Boolean ignoreWarnings) {
        this.limit = limit;
        this.grace = grace;
        this.ignoreWarnings = ignoreWarnings;
    }

    public Integer getLimit() {
        return limit;
    }

    public void setLimit(Integer limit) {
        this.limit = limit;
    }

    public String getGrace() {
        return grace;
    }

    public void setGrace(String grace) {
        this.grace = grace;
    }

    public Boolean getIgnoreWarnings() {
        return ignoreWarnings;
    }

    public void setIgnoreWarnings(Boolean ignoreWarnings) {
        this.ignoreWarnings = ignoreWarnings;
    }

    /** Every field decided, from {@code r} (null: none given, which never restarts). Assumes a validated spec. */
    public static Resolved resolve(CheckRestart r) {
        if (r == null) {
            return new Resolved(0, DEFAULT_GRACE, false);
        }
        return new Resolved(
                r.limit == null ? 0 : r.limit,
                r.grace == null ? DEFAULT_GRACE : Durations.parse(r.grace),
                Boolean.TRUE.equals(r.ignoreWarnings));
    }

    /** A {@code checkRestart} with every field decided; {@code limit} 0 never restarts. */
    public record Resolved(int limit, Duration grace, boolean ignoreWarnings) {
        public Resolved {
            Objects.requireNonNull(grace, "grace");
        }

        @JsonIgnore
        public boolean enabled() {
            return limit > 0;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CheckRestart c
                && Objects.equals(limit, c.limit)
                && Objects.equals(grace, c.grace)
                && Objects.equals(ignoreWarnings, c.ignoreWarnings);
    }

    @Override
    public int hashCode() {
        return Objects.hash(limit, grace, ignoreWarnings);
    }
}
