package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SelectableField;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

@JsonClassDescription("What the user asked for: the node, the tasks and how they run. Fields left out take the defaults"
        + " docs/allocations.md gives.")
/** What the user asked for. Fields left out are null here; defaults are resolved by the {@code effective...} methods. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.network) || !has(self.network.mode) || self.network.mode == 'host'"
                + " || self.tasks.all(t, t.driver != 'raw_exec')",
        message = "raw_exec tasks run in the node's network: give them network mode host, or use exec or oci")
@ValidationRule(
        value = "!has(self.services) || self.services.all(s, has(self.network) && has(self.network.ports)"
                + " && self.network.ports.exists(p, p.name == s.port))",
        message = "each of services names a port of spec.network.ports")
public class AllocationSpec {

    public static final String DEFAULT_SERVICE_ACCOUNT = "default";
    /** The most volumes an allocation may name. */
    public static final int MAX_VOLUMES = 32;

    /** The most Secrets {@code imagePullSecrets} may name. */
    public static final int MAX_IMAGE_PULL_SECRETS = 16;

    @Required
    @SelectableField
    @Size(min = 1, max = 253)
    @ValidationRule(value = "self == oldSelf", message = "nodeName is immutable: create a new allocation to move it")
    @JsonPropertyDescription(
            "The node whose agent runs the allocation; every other agent ignores it. Required and immutable.")
    private String nodeName;

    @Default("Run")
    @JsonPropertyDescription(
            "Run, or Stop to kill every task in kill order and keep the allocation's files; Stop is terminal.")
    private DesiredStatus desiredStatus;

    @Default("Service")
    @JsonPropertyDescription(
            "Service (a main task restarts on any exit) or Batch (a main task that exits 0 is complete).")
    private AllocationType type;

    @Size(max = 253)
    @Pattern(Names.DNS1123_SUBDOMAIN)
    @JsonPropertyDescription(
            "The Allocation of the same namespace this one replaces: tasks start only once it is terminal or gone, and its disk moves here when ephemeralDisk asks.")
    private String previousAllocation;

    @JsonPropertyDescription(
            "The allocation's shared disk: its size and whether the previous allocation's data is carried over.")
    private EphemeralDisk ephemeralDisk;

    @JsonPropertyDescription(
            "Every task's restart policy, unless the task overrides a field; the defaults depend on type.")
    private RestartPolicy restartPolicy;

    @Size(min = 1, max = 253)
    @Pattern(Names.DNS1123_SUBDOMAIN)
    @Default(DEFAULT_SERVICE_ACCOUNT)
    @ValidationRule(
            value = "self == oldSelf",
            message = "serviceAccountName is immutable: create a new allocation to run as another ServiceAccount")
    @JsonPropertyDescription(
            "The ServiceAccount of the allocation's namespace the tasks run as: their tokens are its, and Secrets and ConfigMaps are read with its rights. Immutable; default when not given.")
    private String serviceAccountName;

    @JsonPropertyDescription("Whether each task gets its ServiceAccount's token in secrets/token; true when not given.")
    private Boolean automountServiceAccountToken;

    @ListMapKeys("name")
    @Size(max = MAX_IMAGE_PULL_SECRETS)
    @JsonPropertyDescription(
            "Secrets of type kubernetes.io/dockerconfigjson in the allocation's namespace, read with its ServiceAccount, whose credentials pull the images of its oci tasks: the first whose auths name an image's registry is used. At most 16.")
    private List<LocalObjectReference> imagePullSecrets;

    @Size(max = MAX_VOLUMES)
    @JsonPropertyDescription(
            "Volumes the tasks may mount (a task's config.volumeMounts), at most 32, keyed by name: each is a host volume of the node's agent config (hostVolumes) that lets this namespace use it; the agent refuses the allocation (Admitted=False) otherwise.")
    private List<Volume> volumes;

    @ValidationRule(
            value = "self == oldSelf",
            message = "network is immutable: its namespace and ports are the allocation's for its life; create a new"
                    + " allocation to change them")
    @JsonPropertyDescription("The network the tasks share (host, none or bridge) and the node's ports the allocation"
            + " holds; the node's own network with no ports when not given. Immutable.")
    private Network network;

    @ListMapKeys({"name", "port"})
    @Size(max = ServicePublication.MAX)
    @JsonPropertyDescription("Kubernetes Services of the allocation's namespace that reach it: each names a Service"
            + " and the allocation's port (a spec.network.ports name) published there, at most 16.")
    private List<ServicePublication> services;

    @Required
    @ListMapKeys("name")
    @Size(min = 1, max = 64)
    @ValidationRule(
            value = "self.filter(t, has(t.leader) && t.leader).size() <= 1",
            message = "at most one task may be the leader")
    @JsonPropertyDescription("The tasks of the group, 1 to 64, keyed by name; at most one may be the leader.")
    private List<Task> tasks = new ArrayList<>();

    public String getNodeName() {
        return nodeName;
    }

    public void setNodeName(String nodeName) {
        this.nodeName = nodeName;
    }

    public DesiredStatus getDesiredStatus() {
        return desiredStatus;
    }

    public void setDesiredStatus(DesiredStatus desiredStatus) {
        this.desiredStatus = desiredStatus;
    }

    public AllocationType getType() {
        return type;
    }

    public void setType(AllocationType type) {
        this.type = type;
    }

    public String getPreviousAllocation() {
        return previousAllocation;
    }

    public void setPreviousAllocation(String previousAllocation) {
        this.previousAllocation = previousAllocation;
    }

    public EphemeralDisk getEphemeralDisk() {
        return ephemeralDisk;
    }

    public void setEphemeralDisk(EphemeralDisk ephemeralDisk) {
        this.ephemeralDisk = ephemeralDisk;
    }

    public RestartPolicy getRestartPolicy() {
        return restartPolicy;
    }

    public void setRestartPolicy(RestartPolicy restartPolicy) {
        this.restartPolicy = restartPolicy;
    }

    /** The volumes the tasks may mount; null when none are given. */
    public List<Volume> getVolumes() {
        return volumes;
    }

    public void setVolumes(List<Volume> volumes) {
        this.volumes = volumes;
    }

    /** The volume called {@code name}, or null. */
    public Volume volume(String name) {
        if (volumes == null) {
            return null;
        }
        for (Volume v : volumes) {
            if (v != null && Objects.equals(v.getName(), name)) {
                return v;
            }
        }
        return null;
    }

    /** The network as given; null when not given (the node's network, no ports). */
    public Network getNetwork() {
        return network;
    }

    public void setNetwork(Network network) {
        this.network = network;
    }

    /** The Services the allocation is published into; null when not given. */
    public List<ServicePublication> getServices() {
        return services;
    }

    public void setServices(List<ServicePublication> services) {
        this.services = services;
    }

    /** The network's mode, {@code host} when not given. */
    @JsonIgnore
    public NetworkMode effectiveNetworkMode() {
        return network == null ? NetworkMode.HOST : network.effectiveMode();
    }

    /** The ports the allocation holds, empty when none. */
    @JsonIgnore
    public List<Port> ports() {
        return network == null ? List.of() : network.portList();
    }

    /** The Services the allocation is published into, empty when none. */
    @JsonIgnore
    public List<ServicePublication> serviceList() {
        return services == null
                ? List.of()
                : services.stream().filter(Objects::nonNull).toList();
    }

    public List<Task> getTasks() {
        return tasks;
    }

    public void setTasks(List<Task> tasks) {
        this.tasks = tasks;
    }

    /** The ServiceAccount of the allocation's namespace its tasks run as; {@code default} when not given. */
    public String getServiceAccountName() {
        return serviceAccountName;
    }

    public void setServiceAccountName(String serviceAccountName) {
        this.serviceAccountName = serviceAccountName;
    }

    /** Whether each task gets its ServiceAccount's token in {@code secrets/token}; yes when not given. */
    public Boolean getAutomountServiceAccountToken() {
        return automountServiceAccountToken;
    }

    public void setAutomountServiceAccountToken(Boolean automountServiceAccountToken) {
        this.automountServiceAccountToken = automountServiceAccountToken;
    }

    /** The Secrets whose credentials pull the images of the oci tasks, in order; null when not given. */
    public List<LocalObjectReference> getImagePullSecrets() {
        return imagePullSecrets;
    }

    public void setImagePullSecrets(List<LocalObjectReference> imagePullSecrets) {
        this.imagePullSecrets = imagePullSecrets;
    }

    /** The names {@code imagePullSecrets} gives, in order; empty when none. */
    @JsonIgnore
    public List<String> imagePullSecretNames() {
        if (imagePullSecrets == null) {
            return List.of();
        }
        List<String> names = new ArrayList<>();
        for (LocalObjectReference r : imagePullSecrets) {
            if (r != null && r.getName() != null) {
                names.add(r.getName());
            }
        }
        return List.copyOf(names);
    }

    /** {@code serviceAccountName}, {@code default} when not given. */
    @JsonIgnore
    public String effectiveServiceAccountName() {
        return serviceAccountName == null ? DEFAULT_SERVICE_ACCOUNT : serviceAccountName;
    }

    /** {@code automountServiceAccountToken}, true when not given. */
    @JsonIgnore
    public boolean effectiveAutomountServiceAccountToken() {
        return !Boolean.FALSE.equals(automountServiceAccountToken);
    }

    /** {@code desiredStatus}, {@code Run} when not given. */
    @JsonIgnore
    public DesiredStatus effectiveDesiredStatus() {
        return desiredStatus == null ? DesiredStatus.Run : desiredStatus;
    }

    /** {@code type}, {@code Service} when not given. */
    @JsonIgnore
    public AllocationType effectiveType() {
        return type == null ? AllocationType.Service : type;
    }

    /** The ephemeral disk with every unset field at its default ({@code 300, false, false}). */
    @JsonIgnore
    public EphemeralDisk.Resolved effectiveEphemeralDisk() {
        return EphemeralDisk.resolve(ephemeralDisk);
    }

    /** The allocation-wide restart policy: the given fields over the defaults of {@link #effectiveType()}. */
    @JsonIgnore
    public RestartPolicy.Resolved effectiveRestartPolicy() {
        return RestartPolicy.resolve(effectiveType(), restartPolicy, null);
    }

    /** {@code task}'s restart policy: its own fields over the allocation's over the defaults of the type. */
    public RestartPolicy.Resolved effectiveRestartPolicy(Task task) {
        return RestartPolicy.resolve(effectiveType(), restartPolicy, task.getRestartPolicy());
    }

    /** The task called {@code name}, or null. */
    public Task task(String name) {
        if (tasks == null) {
            return null;
        }
        for (Task t : tasks) {
            if (Objects.equals(t.getName(), name)) {
                return t;
            }
        }
        return null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AllocationSpec s
                && Objects.equals(nodeName, s.nodeName)
                && desiredStatus == s.desiredStatus
                && type == s.type
                && Objects.equals(previousAllocation, s.previousAllocation)
                && Objects.equals(ephemeralDisk, s.ephemeralDisk)
                && Objects.equals(restartPolicy, s.restartPolicy)
                && Objects.equals(serviceAccountName, s.serviceAccountName)
                && Objects.equals(automountServiceAccountToken, s.automountServiceAccountToken)
                && Objects.equals(imagePullSecrets, s.imagePullSecrets)
                && Objects.equals(volumes, s.volumes)
                && Objects.equals(network, s.network)
                && Objects.equals(services, s.services)
                && Objects.equals(tasks, s.tasks);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                nodeName,
                desiredStatus,
                type,
                previousAllocation,
                ephemeralDisk,
                restartPolicy,
                serviceAccountName,
                automountServiceAccountToken,
                imagePullSecrets,
                volumes,
                network,
                services,
                tasks);
    }
}
