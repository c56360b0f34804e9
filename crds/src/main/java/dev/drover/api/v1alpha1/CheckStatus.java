package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.Objects;

/** A check of a task as its runner last reported it: {@code since} is when {@code status} last changed (RFC 3339). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CheckStatus {

    /** The longest {@code output} kept; the rest is cut. */
    public static final int MAX_OUTPUT = 1024;

    /** A check's health, in lower case as Nomad and Consul write it. */
    public enum Status {
        @JsonProperty("passing")
        PASSING,
        @JsonProperty("warning")
        WARNING,
        @JsonProperty("critical")
        CRITICAL;
    }

    @JsonPropertyDescription("The check's name, as in the task's checks.")
    private String name;

    @JsonPropertyDescription("passing, warning or critical; critical until the first passing probe.")
    private Status status;

    @JsonPropertyDescription(
            "What the probe that set the status said: the start of an HTTP body, a command's output, an error.")
    private String output;

    @JsonPropertyDescription("When the status last changed (RFC 3339).")
    private String since;

    public CheckStatus() {}

    public CheckStatus(String name, Status status, String output, String since) {
        this.name = name;
        this.status = status;
        this.output = output;
        this.since = since;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public Status getStatus() {
        return status;
    }

    public void setStatus(Status status) {
        this.status = status;
    }

    /** What the probe that set the status said: the start of an HTTP body, a command's output, an error. */
    public String getOutput() {
        return output;
    }

    public void setOutput(String output) {
        this.output = output;
    }

    public String getSince() {
        return since;
    }

    public void setSince(String since) {
        this.since = since;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CheckStatus c
                && Objects.equals(name, c.name)
                && status == c.status
                && Objects.equals(output, c.output)
                && Objects.equals(since, c.since);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, status, output, since);
    }
}
