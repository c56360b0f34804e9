package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.drover.common.Durations;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A health check of a running task: an HTTP request or a TCP connection to a port of the node, or a command, every
 * {@code interval}. Fields left out are null; the {@code effective...} methods apply the defaults, which the CRD
 * declares as well. Probes wait {@code initialDelay} after the task starts; the check's status turns passing after
 * {@code successThreshold} passing probes in a row and warning or critical after {@code failureThreshold} failing
 * ones, as a Kubernetes probe's thresholds.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self.type != 'exec' || has(self.command)", message = "an exec check needs command")
@ValidationRule(value = "self.type == 'exec' || has(self.port)", message = "an http or tcp check needs port")
@ValidationRule(
        value = "self.type == 'exec' || !(has(self.command) || has(self.args))",
        message = "command and args are for exec checks only")
@ValidationRule(
        value = "self.type == 'http' || !(has(self.path) || has(self.method) || has(self.headers))",
        message = "path, method and headers are for http checks only")
@ValidationRule(value = "self.type != 'exec' || !has(self.port)", message = "an exec check has no port")
@ValidationRule(
        value = "!has(self.port) || (type(self.port) == int ? self.port >= 1 && self.port <= 65535"
                + " : self.port.matches('" + Port.NAME_PATTERN + "'))",
        message = "port is a port number (1 to 65535) or the name of a port of spec.network.ports")
@ValidationRule(
        value = "!has(self.interval) || duration(self.interval) >= duration('1s')",
        message = "interval must be at least 1s")
@ValidationRule(
        value = "!has(self.timeout) || duration(self.timeout) > duration('0s')",
        message = "timeout must be more than 0s")
@ValidationRule(
        value = "!has(self.timeout) || duration(self.timeout) <= duration('" + Check.MAX_TIMEOUT_TEXT + "')",
        message = "timeout must be at most " + Check.MAX_TIMEOUT_TEXT)
@ValidationRule(
        value = "duration(has(self.timeout) ? self.timeout : '2s')"
                + " <= duration(has(self.interval) ? self.interval : '10s')",
        message = "timeout must not be longer than interval")
public class Check {

    // The CRD declares the same defaults (the API server fills them in); these constants keep both in step.
    static final String DEFAULT_INTERVAL_TEXT = "10s";
    static final String DEFAULT_TIMEOUT_TEXT = "2s";
    static final String DEFAULT_INITIAL_DELAY_TEXT = "0s";
    public static final Duration DEFAULT_INTERVAL = Durations.parse(DEFAULT_INTERVAL_TEXT);
    public static final Duration DEFAULT_TIMEOUT = Durations.parse(DEFAULT_TIMEOUT_TEXT);
    public static final Duration MIN_INTERVAL = Duration.ofSeconds(1);
    /**
     * The longest a probe may take. A probe holds one of the agent's probe slots until it ends, so a hanging probe
     * is bounded by this: generous for a health check (a Kubernetes probe's timeout defaults to 1 s, a Drover
     * check's to 2 s), short enough that a slot held by one comes back within minutes.
     */
    public static final String MAX_TIMEOUT_TEXT = "5m";

    public static final Duration MAX_TIMEOUT = Durations.parse(MAX_TIMEOUT_TEXT);
    public static final int DEFAULT_SUCCESS_THRESHOLD = 1;
    public static final int DEFAULT_FAILURE_THRESHOLD = 3;
    public static final int MAX_THRESHOLD = 100;
    public static final String DEFAULT_METHOD = "GET";
    public static final String DEFAULT_PATH = "/";

    /** The HTTP methods an http check may use. */
    public static final String METHOD_PATTERN = "^(GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH)$";

    /** An absolute request path (and query): no spaces or control characters, which would break the request line. */
    public static final String PATH_PATTERN = "^/[^\\x00-\\x20\\x7f]*$";

    public static final int MAX_PATH = 1024;
    public static final int MAX_HEADERS = 16;
    public static final int MAX_COMMAND = 4096;
    public static final int MAX_ARGS = 64;
    public static final int MAX_ARG = 4096;

    @Required
    @Size(min = 1, max = 63)
    @Pattern(Names.DNS1123_LABEL)
    @JsonPropertyDescription("The check's name, unique in its task; names it in the task's status and in events.")
    private String name;

    @Required
    @JsonPropertyDescription(
            "http (a request), tcp (a connection) to port on the node, or exec (a command run inside the task).")
    private CheckType type;

    @Size(min = 1, max = MAX_PATH)
    @Pattern(PATH_PATTERN)
    @JsonPropertyDescription("http only: the request's path and query; / when not given.")
    private String path;

    @JsonPropertyDescription("http and tcp (required there): a port number on the node's loopback address, or the"
            + " name of a port of spec.network.ports (its host port on loopback; in a bridge network, its port at the"
            + " allocation's address).")
    private IntOrString port;

    @Pattern(METHOD_PATTERN)
    @JsonPropertyDescription(
            "http only: the request's method (GET, HEAD, POST, PUT, DELETE, OPTIONS or PATCH); GET when not given.")
    private String method;

    @Size(max = MAX_HEADERS)
    @JsonPropertyDescription("http only: headers to send, at most 16.")
    private List<CheckHeader> headers;

    @Size(min = 1, max = MAX_COMMAND)
    @JsonPropertyDescription("exec only (required there): the command run inside the task, through its driver.")
    private String command;

    @Size(max = MAX_ARGS)
    @ValidationRule(value = "self.all(a, size(a) <= 4096)", message = "each of args may have at most 4096 characters")
    @JsonPropertyDescription("exec only: the command's arguments, at most 64.")
    private List<String> args;

    @Pattern(Durations.PATTERN)
    @Size(max = Durations.MAX_LENGTH)
    @Default(DEFAULT_INTERVAL_TEXT)
    @JsonPropertyDescription("Time between probes, as a duration of at least 1s; 10s when not given.")
    private String interval;

    @Pattern(Durations.PATTERN)
    @Size(max = Durations.MAX_LENGTH)
    @Default(DEFAULT_TIMEOUT_TEXT)
    @JsonPropertyDescription(
            "A probe that takes longer is critical; at most interval and at most 5m; 2s when not given.")
    private String timeout;

    @Pattern(Durations.PATTERN)
    @Size(max = Durations.MAX_LENGTH)
    @Default(DEFAULT_INITIAL_DELAY_TEXT)
    @JsonPropertyDescription("Time after the task starts before the first probe; 0s when not given.")
    private String initialDelay;

    @Min(1)
    @Max(MAX_THRESHOLD)
    @Default("1")
    @JsonPropertyDescription("Passing probes in a row that make the check passing; 1 when not given.")
    private Integer successThreshold;

    @Min(1)
    @Max(MAX_THRESHOLD)
    @Default("3")
    @JsonPropertyDescription("Failing probes in a row that make the check warning or critical; 3 when not given.")
    private Integer failureThreshold;

    public Check() {}

    public Check(String name, CheckType type) {
        this.name = name;
        this.type = type;
    }

    /** The check's name, unique in its task; names it in the task's status and in events. */
    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public CheckType getType() {
        return type;
    }

    public void setType(CheckType type) {
        this.type = type;
    }

    /** http only: the request's path (and query), {@code /} when not given. */
    public String getPath() {
        return path;
    }

    public void setPath(String path) {
        this.path = path;
    }

    /** http and tcp (required there): a port number on the node's loopback, or a port's name. */
    public IntOrString getPort() {
        return port;
    }

    public void setPort(IntOrString port) {
        this.port = port;
    }

    /** http only: the request's method, GET when not given. */
    public String getMethod() {
        return method;
    }

    public void setMethod(String method) {
        this.method = method;
    }

    /** http only: headers to send. */
    public List<CheckHeader> getHeaders() {
        return headers;
    }

    public void setHeaders(List<CheckHeader> headers) {
        this.headers = headers;
    }

    /** exec only (required there): the command, as a {@code raw_exec} task's. */
    public String getCommand() {
        return command;
    }

    public void setCommand(String command) {
        this.command = command;
    }

    /** exec only: the command's arguments. */
    public List<String> getArgs() {
        return args;
    }

    public void setArgs(List<String> args) {
        this.args = args;
    }

    public String getInterval() {
        return interval;
    }

    public void setInterval(String interval) {
        this.interval = interval;
    }

    public String getTimeout() {
        return timeout;
    }

    public void setTimeout(String timeout) {
        this.timeout = timeout;
    }

    public String getInitialDelay() {
        return initialDelay;
    }

    public void setInitialDelay(String initialDelay) {
        this.initialDelay = initialDelay;
    }

    public Integer getSuccessThreshold() {
        return successThreshold;
    }

    public void setSuccessThreshold(Integer successThreshold) {
        this.successThreshold = successThreshold;
    }

    public Integer getFailureThreshold() {
        return failureThreshold;
    }

    public void setFailureThreshold(Integer failureThreshold) {
        this.failureThreshold = failureThreshold;
    }

    /** {@code interval}, 10 s when not given. Assumes a validated spec. */
    @JsonIgnore
    public Duration effectiveInterval() {
        return interval == null ? DEFAULT_INTERVAL : Durations.parse(interval);
    }

    /** {@code timeout}, 2 s when not given. Assumes a validated spec. */
    @JsonIgnore
    public Duration effectiveTimeout() {
        return timeout == null ? DEFAULT_TIMEOUT : Durations.parse(timeout);
    }

    /** {@code initialDelay}, zero when not given. Assumes a validated spec. */
    @JsonIgnore
    public Duration effectiveInitialDelay() {
        return initialDelay == null ? Duration.ZERO : Durations.parse(initialDelay);
    }

    @JsonIgnore
    public int effectiveSuccessThreshold() {
        return successThreshold == null ? DEFAULT_SUCCESS_THRESHOLD : successThreshold;
    }

    @JsonIgnore
    public int effectiveFailureThreshold() {
        return failureThreshold == null ? DEFAULT_FAILURE_THRESHOLD : failureThreshold;
    }

    @JsonIgnore
    public String effectivePath() {
        return path == null ? DEFAULT_PATH : path;
    }

    @JsonIgnore
    public String effectiveMethod() {
        return method == null ? DEFAULT_METHOD : method;
    }

    @JsonIgnore
    public List<CheckHeader> effectiveHeaders() {
        return headers == null ? List.of() : headers;
    }

    @JsonIgnore
    public List<String> effectiveArgs() {
        return args == null ? List.of() : args;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Check c
                && Objects.equals(name, c.name)
                && type == c.type
                && Objects.equals(path, c.path)
                && Objects.equals(port, c.port)
                && Objects.equals(method, c.method)
                && Objects.equals(headers, c.headers)
                && Objects.equals(command, c.command)
                && Objects.equals(args, c.args)
                && Objects.equals(interval, c.interval)
                && Objects.equals(timeout, c.timeout)
                && Objects.equals(initialDelay, c.initialDelay)
                && Objects.equals(successThreshold, c.successThreshold)
                && Objects.equals(failureThreshold, c.failureThreshold);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                name,
                type,
                path,
                port,
                method,
                headers,
                command,
                args,
                interval,
                timeout,
                initialDelay,
                successThreshold,
                failureThreshold);
    }
}
