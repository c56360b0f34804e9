package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** How a check probes its task; written in lower case, as Nomad writes check types. */
public enum CheckType {
    /** An HTTP request to the task's port: a 2xx answer passes, 429 warns, anything else is critical. */
    @JsonProperty("http")
    HTTP,
    /** A TCP connection to the task's port: connecting passes, anything else is critical. */
    @JsonProperty("tcp")
    TCP,
    /** A command run inside the task, through its driver: exit 0 passes, 1 warns, anything else is critical. */
    @JsonProperty("exec")
    EXEC
}
