package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.drover.common.Durations;
import io.fabric8.crd.generator.annotation.PreserveUnknownFields;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** One task of the group. Fields left out are null; the {@code effective...} methods apply the defaults. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "has(self.onChange) && self.onChange == 'Signal' ? has(self.changeSignal) : !has(self.changeSignal)",
        message = "changeSignal is needed with onChange: Signal, and only then")
@ValidationRule(value = "!has(self.checkRestart) || has(self.checks)", message = "checkRestart needs checks")
public class Task {

    // The CRD declares the same defaults (the API server fills them in); these constants keep both in step.
    static final String DEFAULT_KILL_TIMEOUT_TEXT = "5s";
    static final String DEFAULT_SHUTDOWN_DELAY_TEXT = "0s";
    public static final Duration DEFAULT_KILL_TIMEOUT = Durations.parse(DEFAULT_KILL_TIMEOUT_TEXT);
    public static final String DEFAULT_KILL_SIGNAL = "SIGTERM";

    /** The most Secrets and ConfigMaps one task may project as files. */
    public static final int MAX_FILES = 16;

    /** The most health checks one task may have. */
    public static final int MAX_CHECKS = 8;

    @Required
    @Size(min = 1, max = 63)
    @Pattern(Names.DNS1123_LABEL)
    @JsonPropertyDescription("The task's name, unique in the allocation (a DNS-1123 label); also its directory's name.")
    private String name;

    @Required
    @Size(min = 1, max = 63)
    @JsonPropertyDescription(
            "What runs the task: mock, raw_exec or exec; an unknown or disabled driver fails the task with FailedValidation.")
    private String driver;

    // Free-form: values of any type, checked by the driver (a map's schema would force one value type).
    @PreserveUnknownFields
    @SchemaFrom(type = Object.class)
    @JsonPropertyDescription("The driver's options (e.g. command and args); unknown keys are an error, not ignored.")
    private Map<String, Object> config;

    @Size(max = 256)
    @JsonPropertyDescription(
            "Variables added to the task's environment, each with a value or a valueFrom a Secret or ConfigMap; keyed by name.")
    @ListMapKeys("name")
    private List<EnvVar> env;

    @Default("false")
    @JsonPropertyDescription(
            "When the leader finishes, every other task is killed (LeaderTaskDead); false when not given.")
    private Boolean leader;

    @JsonPropertyDescription(
            "When the task runs (Prestart, Poststart or Poststop) and whether it is a sidecar; none: a main task.")
    private Lifecycle lifecycle;

    @JsonPropertyDescription("This task's restart policy, field by field over the allocation's.")
    private RestartPolicy restartPolicy;

    @Pattern(Durations.PATTERN)
    @Size(max = Durations.MAX_LENGTH)
    @Default(DEFAULT_KILL_TIMEOUT_TEXT)
    @JsonPropertyDescription(
            "Time between the kill signal and a forced kill, as a duration (e.g. 5s), capped by the agent's maxKillTimeout.")
    private String killTimeout;

    @Size(min = 1, max = 32)
    @Default(DEFAULT_KILL_SIGNAL)
    @JsonPropertyDescription("The signal a kill sends first; SIGTERM when not given.")
    private String killSignal;

    @Pattern(Durations.PATTERN)
    @Size(max = Durations.MAX_LENGTH)
    @Default(DEFAULT_SHUTDOWN_DELAY_TEXT)
    @JsonPropertyDescription("Time to wait before sending the kill signal, as a duration; 0s when not given.")
    private String shutdownDelay;

    @JsonPropertyDescription(
            "CPU, memory and devices the task needs: requests for node admission, limits under raw_exec's cgroups.")
    private Resources resources;

    @Size(min = 1, max = Users.MAX_LENGTH)
    @Pattern(Users.PATTERN)
    @JsonPropertyDescription(
            "The user a process task runs as: a login name of the node or a uid; the driver's default when not given.")
    private String user;

    @JsonPropertyDescription("The audience and life of the task's ServiceAccount token in secrets/token.")
    private TokenProjection serviceAccountToken;

    @Size(max = MAX_FILES)
    @JsonPropertyDescription(
            "Secrets (in secrets/PATH) and ConfigMaps (in local/PATH) projected as files and kept up to date, at most 16.")
    private List<FileProjection> files;

    @Default("Noop")
    @JsonPropertyDescription(
            "What the running task gets when a Secret or ConfigMap it refers to changes: Noop, Restart or Signal.")
    private ChangeMode onChange;

    @Size(min = 1, max = 32)
    @JsonPropertyDescription("The signal onChange: Signal sends (e.g. SIGHUP); required with it, refused without it.")
    private String changeSignal;

    @Size(max = MAX_CHECKS)
    @ListMapKeys("name")
    @JsonPropertyDescription(
            "Health checks probed while the task runs, at most 8, keyed by name; they gate the Ready condition.")
    private List<Check> checks;

    @JsonPropertyDescription("When failing checks restart the task: after limit unhealthy results in a row past grace.")
    private CheckRestart checkRestart;

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public String getDriver() {
        return driver;
    }

    public void setDriver(String driver) {
        this.driver = driver;
    }

    public Map<String, Object> getConfig() {
        return config;
    }

    public void setConfig(Map<String, Object> config) {
        this.config = config;
    }

    public List<EnvVar> getEnv() {
        return env;
    }

    public void setEnv(List<EnvVar> env) {
        this.env = env;
    }

    public Boolean getLeader() {
        return leader;
    }

    public void setLeader(Boolean leader) {
        this.leader = leader;
    }

    public Lifecycle getLifecycle() {
        return lifecycle;
    }

    public void setLifecycle(Lifecycle lifecycle) {
        this.lifecycle = lifecycle;
    }

    public RestartPolicy getRestartPolicy() {
        return restartPolicy;
    }

    public void setRestartPolicy(RestartPolicy restartPolicy) {
        this.restartPolicy = restartPolicy;
    }

    public String getKillTimeout() {
        return killTimeout;
    }

    public void setKillTimeout(String killTimeout) {
        this.killTimeout = killTimeout;
    }

    public String getKillSignal() {
        return killSignal;
    }

    public void setKillSignal(String killSignal) {
        this.killSignal = killSignal;
    }

    public String getShutdownDelay() {
        return shutdownDelay;
    }

    public void setShutdownDelay(String shutdownDelay) {
        this.shutdownDelay = shutdownDelay;
    }

    public Resources getResources() {
        return resources;
    }

    public void setResources(Resources resources) {
        this.resources = resources;
    }

    /** Whether the task is the group's leader ({@code false} when not given). */
    @JsonIgnore
    public boolean isLeaderTask() {
        return Boolean.TRUE.equals(leader);
    }

    /** The lifecycle hook, or null for a main task. */
    @JsonIgnore
    public LifecycleHook hook() {
        return lifecycle == null ? null : lifecycle.getHook();
    }

    /** Whether the task is a sidecar (a lifecycle task that keeps running). */
    @JsonIgnore
    public boolean isSidecar() {
        return lifecycle != null && Boolean.TRUE.equals(lifecycle.getSidecar());
    }

    /** A main task has no lifecycle hook. */
    @JsonIgnore
    public boolean isMain() {
        return hook() == null;
    }

    /** The config object, empty when not given. */
    @JsonIgnore
    public Map<String, Object> effectiveConfig() {
        return config == null ? Map.of() : config;
    }

    /** The task's environment in order, later entries winning (the API server refuses repeated names; an API server that does not leaves the last); empty when not given. */
    @JsonIgnore
    public Map<String, String> effectiveEnv() {
        return effectiveEnv(Map.of());
    }

    /**
     * As {@link #effectiveEnv()}, with the values read for the {@code valueFrom} entries, by index in {@code env};
     * an entry with none (an optional one whose object or key is missing) is left out, as a Pod leaves it out.
     */
    @JsonIgnore
    public Map<String, String> effectiveEnv(Map<Integer, String> valuesFrom) {
        Map<String, String> out = new LinkedHashMap<>();
        if (env != null) {
            for (int i = 0; i < env.size(); i++) {
                EnvVar e = env.get(i);
                if (e.getValueFrom() == null) {
                    out.put(e.getName(), e.getValue() == null ? "" : e.getValue());
                } else if (valuesFrom.containsKey(i)) {
                    out.put(e.getName(), valuesFrom.get(i));
                }
            }
        }
        return out;
    }

    /** Whether the task reads any Secret or ConfigMap (variables or files). */
    @JsonIgnore
    public boolean usesObjects() {
        return (files != null && !files.isEmpty())
                || (env != null && env.stream().anyMatch(e -> e.getValueFrom() != null));
    }

    /** The user a process task runs as, a name or a numeric uid; null: the driver's default. */
    public String getUser() {
        return user;
    }

    public void setUser(String user) {
        this.user = user;
    }

    /** The task's ServiceAccount token's audience and life; null: the defaults. */
    public TokenProjection getServiceAccountToken() {
        return serviceAccountToken;
    }

    public void setServiceAccountToken(TokenProjection serviceAccountToken) {
        this.serviceAccountToken = serviceAccountToken;
    }

    /** Secrets and ConfigMaps projected as files; null: none. */
    public List<FileProjection> getFiles() {
        return files;
    }

    public void setFiles(List<FileProjection> files) {
        this.files = files;
    }

    /** What the running task gets when a Secret or ConfigMap it refers to changes. */
    public ChangeMode getOnChange() {
        return onChange;
    }

    public void setOnChange(ChangeMode onChange) {
        this.onChange = onChange;
    }

    /** The signal {@code onChange: Signal} sends, e.g. SIGHUP. */
    public String getChangeSignal() {
        return changeSignal;
    }

    public void setChangeSignal(String changeSignal) {
        this.changeSignal = changeSignal;
    }

    /** Health checks while the task runs; null: none. */
    public List<Check> getChecks() {
        return checks;
    }

    public void setChecks(List<Check> checks) {
        this.checks = checks;
    }

    /** When failing checks restart the task; null: never. */
    public CheckRestart getCheckRestart() {
        return checkRestart;
    }

    public void setCheckRestart(CheckRestart checkRestart) {
        this.checkRestart = checkRestart;
    }

    /** {@code checks}, empty when not given. */
    @JsonIgnore
    public List<Check> effectiveChecks() {
        return checks == null ? List.of() : checks;
    }

    /** {@code onChange}, Noop when not given. */
    @JsonIgnore
    public ChangeMode effectiveOnChange() {
        return onChange == null ? ChangeMode.Noop : onChange;
    }

    /** {@code files}, empty when not given. */
    @JsonIgnore
    public List<FileProjection> effectiveFiles() {
        return files == null ? List.of() : files;
    }

    /** {@code killTimeout}, 5 s when not given. Assumes a validated spec. */
    @JsonIgnore
    public Duration effectiveKillTimeout() {
        return killTimeout == null ? DEFAULT_KILL_TIMEOUT : Durations.parse(killTimeout);
    }

    /** {@code killSignal}, SIGTERM when not given. */
    @JsonIgnore
    public String effectiveKillSignal() {
        return killSignal == null ? DEFAULT_KILL_SIGNAL : killSignal;
    }

    /** {@code shutdownDelay}, zero when not given. Assumes a validated spec. */
    @JsonIgnore
    public Duration effectiveShutdownDelay() {
        return shutdownDelay == null ? Duration.ZERO : Durations.parse(shutdownDelay);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Task t
                && Objects.equals(name, t.name)
                && Objects.equals(driver, t.driver)
                && Objects.equals(config, t.config)
                && Objects.equals(env, t.env)
                && Objects.equals(leader, t.leader)
                && Objects.equals(lifecycle, t.lifecycle)
                && Objects.equals(restartPolicy, t.restartPolicy)
                && Objects.equals(killTimeout, t.killTimeout)
                && Objects.equals(killSignal, t.killSignal)
                && Objects.equals(shutdownDelay, t.shutdownDelay)
                && Objects.equals(resources, t.resources)
                && Objects.equals(user, t.user)
                && Objects.equals(serviceAccountToken, t.serviceAccountToken)
                && Objects.equals(files, t.files)
                && Objects.equals(onChange, t.onChange)
                && Objects.equals(changeSignal, t.changeSignal)
                && Objects.equals(checks, t.checks)
                && Objects.equals(checkRestart, t.checkRestart);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                name,
                driver,
                config,
                env,
                leader,
                lifecycle,
                restartPolicy,
                killTimeout,
                killSignal,
                shutdownDelay,
                resources,
                user,
                serviceAccountToken,
                files,
                onChange,
                changeSignal,
                checks,
                checkRestart);
    }
}
