package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@code helm template} output, read back as typed Kubernetes objects, for every supported way to install. */
class ChartRenderTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /** The Drover metrics the dashboard must chart (JOSDK and JVM ones come on top). */
    private static final List<String> DROVER_METRICS = List.of(
            "drover_allocations",
            "drover_allocations_waiting",
            "drover_task_restarts_total",
            "drover_task_events_total",
            "drover_task_cpu_seconds_total",
            "drover_task_memory_working_set_bytes",
            "drover_task_memory_limit_bytes",
            "drover_status_writes_total",
            "drover_state_writes_total",
            "drover_alloc_seen_to_running_seconds",
            "drover_device_gpu_utilization_percent",
            "drover_device_memory_used_bytes",
            "drover_device_temperature_celsius",
            "drover_device_power_watts",
            "drover_device_healthy");

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void everyObjectParsesIntoItsTypedModelWithNoUnknownField(ValueSet values) {
        Rendered rendered = DroverChart.render(values);
        Map<String, Class<?>> typed = Map.ofEntries(
                Map.entry("DaemonSet", DaemonSet.class),
                Map.entry("ServiceAccount", ServiceAccount.class),
                Map.entry("ClusterRole", ClusterRole.class),
                Map.entry("ClusterRoleBinding", ClusterRoleBinding.class),
                Map.entry("Service", Service.class),
                Map.entry("ConfigMap", ConfigMap.class),
                Map.entry("ServiceMonitor", GenericKubernetesResource.class),
                Map.entry("PodMonitor", GenericKubernetesResource.class),
                Map.entry("PrometheusRule", GenericKubernetesResource.class),
                Map.entry("Deployment", io.fabric8.kubernetes.api.model.apps.Deployment.class),
                Map.entry("Secret", io.fabric8.kubernetes.api.model.Secret.class),
                Map.entry("RoleBinding", io.fabric8.kubernetes.api.model.rbac.RoleBinding.class),
                Map.entry("PodDisruptionBudget", io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget.class),
                Map.entry("APIService", io.fabric8.kubernetes.api.model.APIService.class),
                Map.entry("ValidatingAdmissionPolicy", ValidatingAdmissionPolicy.class),
                Map.entry("ValidatingAdmissionPolicyBinding", ValidatingAdmissionPolicyBinding.class));
        assertThat(rendered.objects()).isNotEmpty();
        for (HasMetadata object : rendered.objects()) {
            assertThat(typed)
                    .as("rendered an unexpected kind: %s", object.getKind())
                    .containsKey(object.getKind());
            assertThat(object).as(object.getKind()).isInstanceOf(typed.get(object.getKind()));
            if (!(object instanceof GenericKubernetesResource)) {
                assertThat(UnknownFields.in(object))
                        .as(
                                "fields %s/%s does not define",
                                object.getKind(), object.getMetadata().getName())
                        .isEmpty();
            }
        }
        assertThat(rendered.kinds()).as("object names are unique per kind").doesNotHaveDuplicates();
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void everyObjectCarriesTheStandardLabels(ValueSet values) {
        for (HasMetadata object : DroverChart.render(values).objects()) {
            assertThat(object.getMetadata().getLabels())
                    .as(object.getKind())
                    .containsEntry("app.kubernetes.io/instance", DroverChart.RELEASE)
                    .containsEntry("app.kubernetes.io/version", "0.1.0")
                    .containsEntry("app.kubernetes.io/part-of", "drover")
                    .containsEntry("app.kubernetes.io/managed-by", "Helm")
                    .containsEntry("helm.sh/chart", "drover-0.1.0")
                    .containsEntry("app.kubernetes.io/name", "drover")
                    .containsKey("app.kubernetes.io/component");
        }
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void clusterRoleGrantsExactlyWhatTheAgentNeeds(ValueSet values) {
        ClusterRole role = DroverChart.render(values).one(ClusterRole.class);
        Set<String> grants = new TreeSet<>();
        for (PolicyRule rule : role.getRules()) {
            assertThat(rule.getResourceNames())
                    .as("no rule is narrowed by name")
                    .isNullOrEmpty();
            assertThat(rule.getNonResourceURLs()).isNullOrEmpty();
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    assertThat(grants.add(group + " " + resource + " " + new TreeSet<>(rule.getVerbs())))
                            .as("%s %s granted twice", group, resource)
                            .isTrue();
                }
            }
        }
        assertThat(grants)
                .containsExactlyInAnyOrder(
                        "drover.dev allocations [get, list, patch, update, watch]",
                        "drover.dev allocations/status [patch, update]",
                        "agent.drover.dev allocations/snapshot [get]",
                        " events [create, patch]",
                        " nodes [get, list, watch]",
                        " nodes/status [patch]",
                        "authentication.k8s.io tokenreviews [create]",
                        "authorization.k8s.io subjectaccessreviews [create]",
                        " serviceaccounts/token [create]",
                        " services [get, list, watch]",
                        " pods [list, watch]",
                        "discovery.k8s.io endpointslices [create, delete, get, list, patch, update, watch]");
    }

    @Test
    void withoutNodeConfinementTheAgentMayNotMintTokens() {
        ClusterRole role = DroverChart.render(ValueSet.DEFAULTS, Map.of("nodeConfinement.enabled", false))
                .one(ClusterRole.class);
        assertThat(role.getRules())
                .as("unconfined, minting would reach every ServiceAccount of the cluster")
                .noneMatch(r -> r.getResources().stream().anyMatch(res -> res.startsWith("serviceaccounts")));
        assertThat(role.getRules())
                .as("unconfined, writing EndpointSlices would let any agent point any Service anywhere")
                .noneMatch(r -> r.getResources().contains("endpointslices"));
        assertThat(role.getRules())
                .as("the agent never reads Secrets or ConfigMaps with its own rights")
                .noneMatch(r ->
                        r.getResources().contains("secrets") || r.getResources().contains("configmaps"));
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void clusterRoleBindingBindsTheAgentsServiceAccount(ValueSet values) {
        Rendered rendered = DroverChart.render(values);
        ClusterRoleBinding binding = rendered.one(ClusterRoleBinding.class);
        ServiceAccount account = rendered.one(ServiceAccount.class);
        assertThat(binding.getRoleRef().getName())
                .isEqualTo(rendered.one(ClusterRole.class).getMetadata().getName());
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> {
            assertThat(s.getKind()).isEqualTo("ServiceAccount");
            assertThat(s.getName()).isEqualTo(account.getMetadata().getName());
            assertThat(s.getNamespace()).isEqualTo(DroverChart.NAMESPACE);
        });
        assertThat(rendered.pod().getServiceAccountName())
                .isEqualTo(account.getMetadata().getName());
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void agentLearnsItsNodeNameFromTheDownwardApi(ValueSet values) {
        Rendered rendered = DroverChart.render(values);
        assertThat(rendered.envVar("NODE_NAME"))
                .hasValueSatisfying(
                        e -> assertThat(e.getValueFrom().getFieldRef().getFieldPath())
                                .isEqualTo("spec.nodeName"));
    }

    @ParameterizedTest
    @EnumSource(
            value = ValueSet.class,
            names = {"DEFAULTS", "CUSTOM"})
    void stateLivesOnAHostPathMountedAtTheSamePath(ValueSet values) {
        Rendered rendered = DroverChart.render(values);
        String dataDir = values == ValueSet.CUSTOM ? "/data/drover" : "/var/lib/drover";
        assertThat(rendered.env()).containsEntry("DROVER_DATA_DIR", dataDir);
        Volume data = volume(rendered, "data");
        assertThat(data.getHostPath().getPath()).isEqualTo(dataDir);
        assertThat(data.getHostPath().getType()).isEqualTo("DirectoryOrCreate");
        assertThat(mount(rendered, "data").getMountPath())
                .as("task paths mean the same on host and in the container")
                .isEqualTo(dataDir);
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void theAgentShowsOtherAgentsOnlyAnHourLongTokenForTheirAudience(ValueSet values) {
        Rendered rendered = DroverChart.render(values);
        Volume peer = volume(rendered, "peer-token");
        assertThat(peer.getProjected().getSources()).singleElement().satisfies(source -> {
            assertThat(source.getServiceAccountToken().getAudience()).isEqualTo("drover.dev/agent");
            assertThat(source.getServiceAccountToken().getExpirationSeconds()).isEqualTo(3600L);
            assertThat(source.getServiceAccountToken().getPath()).isEqualTo("token");
        });
        VolumeMount mount = mount(rendered, "peer-token");
        assertThat(mount.getMountPath())
                .as("the agent's default peerTokenFile is its token there")
                .isEqualTo("/var/run/secrets/drover.dev/peer");
        assertThat(mount.getReadOnly()).isTrue();
    }

    @Test
    void agentIsNodeCriticalAndToleratesEveryTaintByDefault() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS);
        assertThat(rendered.pod().getPriorityClassName()).isEqualTo("system-node-critical");
        assertThat(rendered.pod().getTolerations()).singleElement().satisfies(t -> {
            assertThat(t.getOperator()).isEqualTo("Exists");
            assertThat(t.getKey()).isNull();
            assertThat(t.getEffect()).isNull();
        });
        assertThat(rendered.daemonSet().getSpec().getUpdateStrategy().getType()).isEqualTo("RollingUpdate");
    }

    @Test
    void defaultContainerHasNoPrivilegeAndNoRawExec() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS);
        var security = rendered.agent().getSecurityContext();
        assertThat(security.getPrivileged()).isFalse();
        assertThat(security.getAllowPrivilegeEscalation()).isFalse();
        assertThat(security.getReadOnlyRootFilesystem()).isTrue();
        assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(security.getCapabilities().getAdd()).isNullOrEmpty();
        assertThat(security.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        assertThat(rendered.pod().getHostPID()).isNull();
        assertThat(rendered.pod().getHostNetwork()).isNull();
        assertThat(rendered.pod().getRuntimeClassName()).isNull();
        assertThat(rendered.env()).doesNotContainKeys("DROVER_ENABLE_RAW_EXEC", "DROVER_RAW_EXEC_LAUNCHER");
        assertThat(volume(rendered, "tmp").getEmptyDir())
                .as("a writable /tmp beside the read-only root")
                .isNotNull();
        assertThat(mount(rendered, "tmp").getMountPath()).isEqualTo("/tmp");
        assertThat(rendered.pod().getVolumes())
                .as("the only host path is the data dir")
                .filteredOn(v -> v.getHostPath() != null)
                .extracting(Volume::getName)
                .containsExactly("data");
    }

    @Test
    void probesAskHealthzAndReadyzOnTheMetricsPort() {
        var agent = DroverChart.render(ValueSet.DEFAULTS).agent();
        assertThat(agent.getPorts())
                .filteredOn(p -> p.getName().equals("metrics"))
                .singleElement()
                .satisfies(p -> {
                    assertThat(p.getContainerPort()).isEqualTo(9090);
                    assertThat(p.getHostPort())
                            .as("metrics stay inside the cluster network")
                            .isNull();
                });
        assertThat(agent.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(agent.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("metrics");
        assertThat(agent.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(agent.getReadinessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("metrics");
    }

    @Test
    void theHttpsApiIsOpenOnTheNodeUnlessTurnedOff() {
        Rendered on = DroverChart.render(ValueSet.DEFAULTS);
        assertThat(on.agent().getPorts())
                .filteredOn(p -> p.getName().equals("api"))
                .singleElement()
                .satisfies(p -> {
                    assertThat(p.getContainerPort()).isEqualTo(10346);
                    assertThat(p.getHostPort())
                            .as("clients dial the node's address")
                            .isEqualTo(10346);
                });
        assertThat(on.env()).containsEntry("DROVER_API_PORT", "10346");
        Rendered off = DroverChart.render(ValueSet.DEFAULTS, Map.of("agent.apiPort", 0));
        assertThat(off.agent().getPorts()).extracting(p -> p.getName()).containsExactly("metrics");
        assertThat(off.env()).containsEntry("DROVER_API_PORT", "-1");
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void metricsServiceSelectsOnlyTheAgentPods(ValueSet values) {
        Rendered rendered = DroverChart.render(values);
        Service service = rendered.one(Service.class);
        Map<String, String> podLabels =
                rendered.daemonSet().getSpec().getTemplate().getMetadata().getLabels();
        assertThat(service.getSpec().getSelector())
                .isEqualTo(rendered.daemonSet().getSpec().getSelector().getMatchLabels());
        assertThat(podLabels).containsAllEntriesOf(service.getSpec().getSelector());
        int port = values == ValueSet.CUSTOM ? 9400 : 9090;
        assertThat(service.getSpec().getPorts()).singleElement().satisfies(p -> {
            assertThat(p.getName()).isEqualTo("metrics");
            assertThat(p.getPort()).isEqualTo(port);
            assertThat(p.getTargetPort().getStrVal()).isEqualTo("metrics");
        });
        assertThat(rendered.env()).containsEntry("DROVER_METRICS_PORT", Integer.toString(port));
    }

    @Test
    void agentConfigFileIsExactlyTheConfigValuesAndTheNetworkSettings() throws IOException {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS);
        ConfigMap config = rendered.configMap("drover").orElseThrow();
        JsonNode values = YAML.readTree(DroverChart.DIR.resolve("values.yaml").toFile());
        com.fasterxml.jackson.databind.node.ObjectNode expected = (com.fasterxml.jackson.databind.node.ObjectNode)
                values.at("/agent/config").deepCopy();
        expected.setAll((com.fasterxml.jackson.databind.node.ObjectNode) values.at("/agent/network"));
        expected.put("nodeSharing", "dedicated"); // agent.nodeSharing, chosen for 1.32
        assertThat(YAML.readTree(config.getData().get("agent.yaml"))).isEqualTo(expected);
        assertThat(config.getData()).containsOnlyKeys("agent.yaml");
        assertThat(rendered.agent().getArgs()).containsExactly("--config", "/etc/drover/agent.yaml");
        assertThat(volume(rendered, "config").getConfigMap().getName()).isEqualTo("drover");
        assertThat(mount(rendered, "config").getMountPath()).isEqualTo("/etc/drover");
        assertThat(rendered.daemonSet().getSpec().getTemplate().getMetadata().getAnnotations())
                .as("a config change rolls the pods")
                .containsKey("checksum/config");
    }

    @Test
    void hostVolumesGoIntoTheAgentsConfigAndAreMountedIntoItsPodAtTheSamePath() throws Exception {
        java.nio.file.Path models = java.nio.file.Files.createTempDirectory("models");
        java.nio.file.Path file = java.nio.file.Files.createTempFile("agent", ".yaml");
        try {
            Rendered rendered = DroverChart.render(
                    ValueSet.DEFAULTS,
                    Map.of(
                            "agent.hostVolumes.models.path",
                            models.toString(),
                            "agent.hostVolumes.models.readOnly",
                            true,
                            "agent.hostVolumes.models.namespaces[0]",
                            "ml"));
            Volume volume = volume(rendered, "hv-models");
            assertThat(volume.getHostPath().getPath()).isEqualTo(models.toString());
            assertThat(volume.getHostPath().getType()).isEqualTo("Directory");
            assertThat(mount(rendered, "hv-models").getMountPath()).isEqualTo(models.toString());
            assertThat(mount(rendered, "hv-models").getReadOnly()).isTrue();
            String agentYaml =
                    rendered.configMap("drover").orElseThrow().getData().get("agent.yaml");
            assertThat(YAML.readTree(agentYaml).path("logLevel").asText())
                    .as("the rest of the config is kept")
                    .isEqualTo("info");
            java.nio.file.Files.writeString(file, agentYaml);
            var lent = dev.drover.agent.AgentConfig.load(List.of("--config", file.toString(), "--node", "n1"), Map.of())
                    .hostVolumes()
                    .get("models")
                    .orElseThrow();
            assertThat(lent.path())
                    .as("the agent reads the volume the chart renders")
                    .isEqualTo(models);
            assertThat(lent.readOnly()).isTrue();
            assertThat(lent.allows("ml")).isTrue();
            assertThat(lent.allows("default")).isFalse();
        } finally {
            java.nio.file.Files.delete(file);
            java.nio.file.Files.delete(models);
        }
        assertThat(DroverChart.render(ValueSet.DEFAULTS).agent().getVolumeMounts())
                .noneMatch(m -> m.getName().startsWith("hv-"));
        assertThatThrownBy(() -> DroverChart.template(ValueSet.DEFAULTS, Map.of("agent.hostVolumes.x.path", "rel")))
                .hasMessageContaining("/agent/hostVolumes/x/path");
    }

    @Test
    void theFieldSelectorCanBeTurnedOffForClustersBefore131() throws Exception {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS, Map.of("agent.config.fieldSelector", false));
        String agentYaml = rendered.configMap("drover").orElseThrow().getData().get("agent.yaml");
        assertThat(YAML.readTree(agentYaml).path("fieldSelector").asBoolean(true))
                .isFalse();
        java.nio.file.Path file = java.nio.file.Files.createTempFile("agent", ".yaml");
        try {
            java.nio.file.Files.writeString(file, agentYaml);
            assertThat(dev.drover.agent.AgentConfig.load(List.of("--config", file.toString(), "--node", "n1"), Map.of())
                            .fieldSelector())
                    .as("the agent reads it from the file the chart renders")
                    .isFalse();
        } finally {
            java.nio.file.Files.delete(file);
        }
        assertThatThrownBy(() -> DroverChart.template(ValueSet.DEFAULTS, Map.of("agent.config.fieldSelector", "no")))
                .hasMessageContaining("/agent/config/fieldSelector");
    }

    @Test
    void aClusterOlderThanTheCelRulesIsRefusedAtInstall() {
        assertThatThrownBy(() -> DroverChart.helm()
                        .template()
                        .withName("drover")
                        .withKubeVersion("1.24.0")
                        .call())
                .hasMessageContaining("chart requires kubeVersion: >=1.25.0-0");
        assertThat(DroverChart.helm()
                        .template()
                        .withName("drover")
                        .withKubeVersion("1.30.0")
                        .set("agent.config.fieldSelector", false)
                        .call())
                .contains("fieldSelector: false");
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void eachAgentIsConfinedToItsNodeByDefault(ValueSet values) {
        Rendered rendered = DroverChart.render(values);
        List<ValidatingAdmissionPolicy> policies = rendered.objects().stream()
                .filter(ValidatingAdmissionPolicy.class::isInstance)
                .map(ValidatingAdmissionPolicy.class::cast)
                .filter(ChartRenderTest::nodeConfinement)
                .toList();
        assertThat(policies)
                .extracting(p -> p.getSpec().getMatchConstraints().getResourceRules().stream()
                        .map(r -> r.getApiGroups() + "" + r.getResources())
                        .toList())
                .as("one policy per kind")
                .containsExactly(
                        List.of("[][nodes, nodes/status]"),
                        List.of("[drover.dev][allocations, allocations/status]"),
                        List.of("[][events]"),
                        List.of("[events.k8s.io][events]"),
                        List.of("[discovery.k8s.io][endpointslices]"),
                        List.of("[][serviceaccounts/token]"));
        String agent = "system:serviceaccount:" + DroverChart.NAMESPACE + ":"
                + rendered.one(ServiceAccount.class).getMetadata().getName();
        for (ValidatingAdmissionPolicy policy : policies) {
            assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
            assertThat(policy.getSpec().getMatchConditions())
                    .singleElement()
                    .satisfies(c -> assertThat(c.getExpression())
                            .as("applies to the agent's ServiceAccount only")
                            .isEqualTo("request.userInfo.username == '" + agent + "'"));
            assertThat(policy.getSpec().getValidations().getFirst().getExpression())
                    .as("a token naming no node is refused first")
                    .isEqualTo("variables.nodeName != ''");
        }
        List<ValidatingAdmissionPolicyBinding> bindings = rendered.objects().stream()
                .filter(ValidatingAdmissionPolicyBinding.class::isInstance)
                .map(ValidatingAdmissionPolicyBinding.class::cast)
                .filter(ChartRenderTest::nodeConfinement)
                .toList();
        assertThat(bindings)
                .extracting(b -> b.getSpec().getPolicyName())
                .containsExactlyElementsOf(
                        policies.stream().map(p -> p.getMetadata().getName()).toList());
        assertThat(bindings)
                .allSatisfy(b -> assertThat(b.getSpec().getValidationActions()).containsExactly("Deny"));
    }

    static boolean nodeConfinement(io.fabric8.kubernetes.api.model.HasMetadata o) {
        return "node-confinement".equals(o.getMetadata().getLabels().get("app.kubernetes.io/component"));
    }

    @Test
    void restartAttributionIsRenderedByDefaultFrom130AndLeftOutWhenTurnedOffOrOlder() {
        assertThat(DroverChart.render(ValueSet.DEFAULTS).objects())
                .filteredOn(o -> o.getKind().startsWith("ValidatingAdmissionPolicy"))
                .filteredOn(o -> o.getMetadata().getName().endsWith("-restarted-by"))
                .extracting(io.fabric8.kubernetes.api.model.HasMetadata::getKind)
                .containsExactly("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding");
        assertThat(DroverChart.render(ValueSet.DEFAULTS, Map.of("restartAttribution.enabled", false))
                        .objects())
                .noneMatch(o -> o.getMetadata().getName().endsWith("-restarted-by"));
        String old = DroverChart.template(
                "1.29.0", Map.of("agent.config.fieldSelector", false, "nodeConfinement.enabled", false));
        assertThat(DroverChart.parse(old))
                .as("before 1.30 left out without failing: only a name in an event rests on it")
                .noneMatch(o -> o.getKind().startsWith("ValidatingAdmissionPolicy"));
    }

    @Test
    void nodeConfinementIsLeftOutOnlyWhenTurnedOff() {
        assertThat(DroverChart.render(ValueSet.DEFAULTS, Map.of("nodeConfinement.enabled", false))
                        .objects())
                .filteredOn(o -> o.getKind().startsWith("ValidatingAdmissionPolicy"))
                .noneMatch(ChartRenderTest::nodeConfinement);
        // before 1.30 the policies cannot be had, and the chart does not go without them silently
        assertThatThrownBy(() -> DroverChart.template("1.29.0", Map.of("agent.config.fieldSelector", false)))
                .hasMessageContaining("nodeConfinement.enabled needs Kubernetes 1.30 or newer")
                .hasMessageContaining("set nodeConfinement.enabled=false");
        String old = DroverChart.template(
                "1.29.0", Map.of("agent.config.fieldSelector", false, "nodeConfinement.enabled", false));
        assertThat(DroverChart.parse(old)).noneMatch(o -> o.getKind().startsWith("ValidatingAdmissionPolicy"));
        assertThat(notes("1.29.0", Map.of("agent.config.fieldSelector", false, "nodeConfinement.enabled", false)))
                .contains("Each agent is NOT confined to its node: nodeConfinement.enabled is false (Kubernetes"
                        + " v1.29.0 has no ValidatingAdmissionPolicy v1");
        assertThat(notes(DroverChart.KUBE_VERSION, Map.of("nodeConfinement.enabled", false)))
                .contains("Each agent is NOT confined to its node: nodeConfinement.enabled is false")
                .contains("Unconfined agents get no right to mint ServiceAccount");
        assertThat(notes(DroverChart.KUBE_VERSION, Map.of())).doesNotContain("NOT confined");
    }

    /** NOTES.txt as {@code helm install --dry-run} prints it for a cluster of {@code kubeVersion}. */
    private static String notes(String kubeVersion, Map<String, Object> sets) {
        var install = DroverChart.helm()
                .install()
                .withName(DroverChart.RELEASE)
                .withNamespace(DroverChart.NAMESPACE)
                .withKubeVersion(kubeVersion)
                .clientOnly()
                .dryRun();
        sets.forEach(install::set);
        return install.call().getOutput();
    }

    @Test
    void changedConfigChangesTheChecksumSoPodsRoll() {
        String before = DroverChart.render(ValueSet.DEFAULTS)
                .daemonSet()
                .getSpec()
                .getTemplate()
                .getMetadata()
                .getAnnotations()
                .get("checksum/config");
        Rendered changed = DroverChart.render(ValueSet.DEFAULTS, Map.of("agent.config.logLevel", "debug"));
        assertThat(changed.configMap("drover").orElseThrow().getData().get("agent.yaml"))
                .contains("logLevel: debug");
        assertThat(changed.daemonSet()
                        .getSpec()
                        .getTemplate()
                        .getMetadata()
                        .getAnnotations()
                        .get("checksum/config"))
                .isNotEqualTo(before);
    }

    @Test
    void rawExecRunsTasksOnTheHostSoTheySurviveAgentRestarts() {
        Rendered rendered = DroverChart.render(ValueSet.RAW_EXEC);
        assertThat(rendered.env()).containsEntry("DROVER_ENABLE_RAW_EXEC", "true");
        assertThat(rendered.env().get("DROVER_RAW_EXEC_LAUNCHER"))
                .startsWith("nsenter --target 1 --mount --uts --ipc --net --pid -- systemd-run --scope");
        assertThat(rendered.pod().getHostPID()).isTrue();
        assertThat(rendered.agent().getSecurityContext().getPrivileged()).isTrue();
        assertThat(rendered.agent().getSecurityContext().getAllowPrivilegeEscalation())
                .isTrue();
        assertThat(rendered.env())
                .containsEntry("DROVER_CGROUP_PARENT", "/drover")
                .containsEntry("DROVER_PIDS_MAX", "0");
        assertThat(rendered.agent().getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/sys/fs/cgroup"));
        assertThat(rendered.pod().getVolumes())
                .filteredOn(v -> v.getHostPath() != null)
                .extracting(v -> v.getHostPath().getPath())
                .contains("/sys/fs/cgroup");
    }

    @Test
    void rawExecInsideTheContainerAddsNoPrivilege() {
        Rendered rendered = DroverChart.render(ValueSet.RAW_EXEC, Map.of("agent.rawExec.hostProcesses", false));
        assertThat(rendered.env())
                .containsEntry("DROVER_ENABLE_RAW_EXEC", "true")
                .doesNotContainKey("DROVER_RAW_EXEC_LAUNCHER")
                .doesNotContainKey("DROVER_CGROUP_PARENT");
        assertThat(rendered.agent().getVolumeMounts())
                .noneMatch(m -> m.getMountPath().equals("/sys/fs/cgroup"));
        assertThat(rendered.pod().getHostPID()).isNull();
        assertThat(rendered.agent().getSecurityContext().getPrivileged()).isFalse();
        assertThat(rendered.agent().getSecurityContext().getCapabilities().getDrop())
                .containsExactly("ALL");
    }

    @Test
    void execGetsThePrivilegeToConfineTasksAndRunsThemOnTheHostLikeRawExec() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS, Map.of("agent.exec.enabled", true));
        assertThat(rendered.env())
                .containsEntry("DROVER_ENABLE_EXEC", "true")
                .doesNotContainKey("DROVER_ENABLE_RAW_EXEC")
                .containsEntry("DROVER_CGROUP_PARENT", "/drover")
                .containsEntry("DROVER_PIDS_MAX", "0");
        assertThat(rendered.env().get("DROVER_RAW_EXEC_LAUNCHER")).startsWith("nsenter --target 1");
        assertThat(rendered.pod().getHostPID()).isTrue();
        assertThat(rendered.agent().getSecurityContext().getPrivileged()).isTrue();

        Rendered inContainer = DroverChart.render(
                ValueSet.DEFAULTS, Map.of("agent.exec.enabled", true, "agent.rawExec.hostProcesses", false));
        assertThat(inContainer.pod().getHostPID()).isNull();
        assertThat(inContainer.agent().getSecurityContext().getPrivileged())
                .as("namespaces and user switches need it even inside the container")
                .isTrue();
    }

    @Test
    void ociRunsTheNodesRuntimeOnTheHostWithTheNodesCdiSpecsMountedReadOnly() {
        Rendered rendered = DroverChart.render(
                ValueSet.DEFAULTS, Map.of("agent.oci.enabled", true, "agent.oci.runtime", "/usr/bin/runc"));
        assertThat(rendered.env())
                .containsEntry("DROVER_ENABLE_OCI", "true")
                .containsEntry("DROVER_OCI_RUNTIME", "/usr/bin/runc")
                .doesNotContainKey("DROVER_ENABLE_EXEC")
                .doesNotContainKey("DROVER_ENABLE_RAW_EXEC")
                .containsEntry("DROVER_CGROUP_PARENT", "/drover")
                .containsEntry("DROVER_PIDS_MAX", "0");
        assertThat(rendered.pod().getHostPID()).isTrue();
        assertThat(rendered.agent().getSecurityContext().getPrivileged())
                .as("overlay mounts and the runtime's namespaces")
                .isTrue();
        for (String dir : List.of("/etc/cdi", "/var/run/cdi")) {
            assertThat(rendered.agent().getVolumeMounts())
                    .filteredOn(m -> m.getMountPath().equals(dir))
                    .singleElement()
                    .satisfies(m -> assertThat(m.getReadOnly()).isTrue());
            assertThat(rendered.pod().getVolumes())
                    .anySatisfy(v -> assertThat(v.getHostPath())
                            .isNotNull()
                            .satisfies(h -> assertThat(h.getPath()).isEqualTo(dir)));
        }

        assertThatThrownBy(() -> DroverChart.template(ValueSet.DEFAULTS, Map.of("agent.oci.enabled", true)))
                .as("on the host, the image's runc is out of reach")
                .hasMessageContaining("agent.oci.runtime: set the path of runc or crun on the nodes");

        Rendered inContainer = DroverChart.render(
                ValueSet.DEFAULTS,
                Map.of("agent.oci.enabled", true, "agent.rawExec.hostProcesses", false, "agent.oci.cdi", false));
        assertThat(inContainer.env())
                .as("the image's own runc, found at start")
                .doesNotContainKey("DROVER_OCI_RUNTIME");
        assertThat(inContainer.pod().getHostPID()).isNull();
        assertThat(inContainer.agent().getSecurityContext().getPrivileged()).isTrue();
        assertThat(inContainer.agent().getVolumeMounts())
                .noneMatch(m -> m.getMountPath().endsWith("/cdi"));
    }

    @Test
    void onlyTheMockDriverRunsTheAgentAsItsOwnUserOnADataDirAnInitContainerGaveIt() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS);
        var security = rendered.agent().getSecurityContext();
        assertThat(security.getRunAsUser()).isEqualTo(65532L);
        assertThat(security.getRunAsGroup()).isEqualTo(65532L);
        assertThat(security.getRunAsNonRoot()).isTrue();

        Container dataDir = rendered.pod().getInitContainers().stream()
                .filter(c -> c.getName().equals("data-dir"))
                .findFirst()
                .orElseThrow();
        assertThat(dataDir.getImage()).isEqualTo(rendered.agent().getImage());
        assertThat(dataDir.getCommand())
                .as("links themselves (-h), never what they point at")
                .containsExactly("chown", "-R", "-h", "65532:65532", "/var/lib/drover");
        assertThat(dataDir.getVolumeMounts())
                .singleElement()
                .satisfies(m -> assertThat(m.getMountPath()).isEqualTo("/var/lib/drover"));
        var initSecurity = dataDir.getSecurityContext();
        assertThat(initSecurity.getRunAsUser()).isZero();
        assertThat(initSecurity.getAllowPrivilegeEscalation()).isFalse();
        assertThat(initSecurity.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(initSecurity.getCapabilities().getAdd())
                .as("chown rights and reading what an earlier agent kept private, nothing else")
                .containsExactlyInAnyOrder("CHOWN", "DAC_READ_SEARCH");

        Rendered customUser = DroverChart.render(
                ValueSet.DEFAULTS, Map.of("securityContext.runAsUser", 1234, "securityContext.runAsGroup", 1235));
        assertThat(customUser.pod().getInitContainers().getFirst().getCommand()).contains("1234:1235");

        Rendered imagesUser = DroverChart.render(
                ValueSet.DEFAULTS, Map.of("securityContext.runAsUser", "null", "securityContext.runAsGroup", "null"));
        assertThat(imagesUser.pod().getInitContainers().getFirst().getCommand())
                .as("without a runAsUser the image's user runs the agent, and still gets the data dir")
                .contains("65532:65532");
    }

    @Test
    void driversAndGpusThatNeedRootRunTheAgentAsRootWithNoDataDirInitContainer() {
        for (Map<String, Object> values : List.of(
                Map.<String, Object>of("agent.rawExec.enabled", true, "agent.rawExec.hostProcesses", false),
                Map.<String, Object>of("agent.rawExec.enabled", true),
                Map.<String, Object>of("agent.exec.enabled", true),
                Map.<String, Object>of("devicePlugins.nvidia.enabled", true))) {
            Rendered rendered = DroverChart.render(ValueSet.DEFAULTS, values);
            assertThat(rendered.agent().getSecurityContext().getRunAsUser())
                    .as("%s", values)
                    .isZero();
            assertThat(rendered.agent().getSecurityContext().getRunAsNonRoot())
                    .as("%s", values)
                    .isNotEqualTo(Boolean.TRUE);
            assertThat(rendered.pod().getInitContainers()).as("%s", values).isNullOrEmpty();
        }
    }

    @Test
    void onlyTheMockDriverGetsNoPrivilegeAndNoProcessDriver() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS);
        assertThat(rendered.env())
                .doesNotContainKey("DROVER_ENABLE_EXEC")
                .doesNotContainKey("DROVER_ENABLE_RAW_EXEC")
                .doesNotContainKey("DROVER_PIDS_MAX");
        assertThat(rendered.pod().getHostPID()).isNull();
        assertThat(rendered.agent().getSecurityContext().getPrivileged()).isFalse();
        assertThat(rendered.agent().getSecurityContext().getCapabilities().getDrop())
                .containsExactly("ALL");
    }

    @Test
    void nvidiaThroughTheRuntimeClassNeedsNoPrivilege() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS, Map.of("devicePlugins.nvidia.enabled", true));
        assertThat(rendered.pod().getRuntimeClassName()).isEqualTo("nvidia");
        assertThat(rendered.env())
                .containsEntry("NVIDIA_VISIBLE_DEVICES", "all")
                .containsEntry("NVIDIA_DRIVER_CAPABILITIES", "utility")
                .doesNotContainKey("LD_LIBRARY_PATH");
        assertThat(rendered.agent().getArgs()).containsSequence("--device-plugin", "nvidia");
        assertThat(rendered.agent().getSecurityContext().getPrivileged()).isFalse();
    }

    @Test
    void nvidiaFromTheHostMountsOnlyTheNvmlLibrary() {
        Rendered rendered = DroverChart.render(ValueSet.GPU_MONITORING);
        assertThat(rendered.pod().getRuntimeClassName()).isNull();
        Volume library = volume(rendered, "nvidia-ml");
        assertThat(library.getHostPath().getPath()).isEqualTo("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
        assertThat(library.getHostPath().getType()).isEqualTo("File");
        VolumeMount mount = mount(rendered, "nvidia-ml");
        assertThat(mount.getReadOnly()).isTrue();
        assertThat(mount.getMountPath()).isEqualTo(rendered.env().get("LD_LIBRARY_PATH") + "/libnvidia-ml.so.1");
        assertThat(rendered.agent().getSecurityContext().getPrivileged())
                .as("NVML opens /dev/nvidia*")
                .isTrue();
        assertThat(rendered.agent().getArgs())
                .containsSequence("--device-plugin", "nvidia")
                .containsSequence("--device-plugin", "fake:/etc/drover/fake-devices.yaml");
        assertThat(rendered.configMap("drover").orElseThrow().getData().get("fake-devices.yaml"))
                .contains("GPU-fake-0");
        assertThat(rendered.pod().getNodeSelector()).containsEntry("nvidia.com/gpu.present", "true");
    }

    @Test
    void monitoringObjectsAreOffByDefault() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS);
        assertThat(rendered.generic("ServiceMonitor")).isEmpty();
        assertThat(rendered.configMap("drover-dashboard")).isEmpty();
    }

    @Test
    void serviceMonitorScrapesTheMetricsServiceAndLabelsEachNode() {
        Rendered rendered = DroverChart.render(ValueSet.GPU_MONITORING);
        GenericKubernetesResource monitor = rendered.generic("ServiceMonitor").orElseThrow();
        assertThat(monitor.getApiVersion()).isEqualTo("monitoring.coreos.com/v1");
        assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "prometheus");
        JsonNode spec = YAML.valueToTree(monitor.getAdditionalProperties().get("spec"));
        Map<String, String> selector = YAML.convertValue(
                spec.at("/selector/matchLabels"),
                YAML.getTypeFactory().constructMapType(Map.class, String.class, String.class));
        assertThat(rendered.one(Service.class).getMetadata().getLabels()).containsAllEntriesOf(selector);
        assertThat(selector)
                .as("selects the Service, not the pods")
                .containsEntry("app.kubernetes.io/component", "metrics");
        JsonNode endpoint = spec.at("/endpoints/0");
        assertThat(endpoint.at("/port").asText()).isEqualTo("metrics");
        assertThat(endpoint.at("/path").asText()).isEqualTo("/metrics");
        assertThat(endpoint.at("/relabelings/0/targetLabel").asText()).isEqualTo("node");
        assertThat(spec.at("/namespaceSelector/matchNames/0").asText()).isEqualTo(DroverChart.NAMESPACE);
    }

    @Test
    void dashboardConfigMapChartsEveryDroverMetric() throws IOException {
        ConfigMap dashboard = DroverChart.render(ValueSet.GPU_MONITORING)
                .configMap("drover-dashboard")
                .orElseThrow();
        assertThat(dashboard.getMetadata().getNamespace()).isEqualTo("monitoring");
        assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
        assertThat(dashboard.getMetadata().getAnnotations()).containsEntry("grafana_folder", "Drover");
        String json = dashboard.getData().get("drover.json");
        assertThat(json)
                .isEqualToIgnoringWhitespace(Files.readString(DroverChart.DIR.resolve("dashboards/drover.json")));
        JsonNode board = new ObjectMapper().readTree(json);
        List<String> expressions = new ArrayList<>();
        board.get("panels")
                .forEach(p -> p.path("targets")
                        .forEach(t -> expressions.add(t.get("expr").asText())));
        for (String metric : DROVER_METRICS) {
            assertThat(expressions).as("a panel charts %s", metric).anyMatch(e -> e.contains(metric));
        }
        assertThat(expressions)
                .anyMatch(e -> e.contains("operator_sdk_reconciliations"))
                .anyMatch(e -> e.contains("jvm_"));
    }

    @Test
    void serviceMonitorWithoutTheServiceIsRefusedWithTheFix() {
        assertThatThrownBy(() -> DroverChart.render(
                        ValueSet.DEFAULTS,
                        Map.of("metrics.serviceMonitor.enabled", true, "metrics.service.enabled", false)))
                .hasMessageContaining("metrics.serviceMonitor.enabled needs metrics.service.enabled=true");
    }

    @Test
    void customImageResourcesPlacementAndPriorityReachTheDaemonSet() {
        Rendered rendered = DroverChart.render(ValueSet.CUSTOM);
        assertThat(rendered.daemonSet().getMetadata().getName()).isEqualTo("node-agent");
        assertThat(rendered.agent().getImage()).isEqualTo("registry.example.com/platform/drover-agent:0.1.0-rc1");
        assertThat(rendered.agent().getImagePullPolicy()).isEqualTo("Always");
        assertThat(rendered.pod().getImagePullSecrets())
                .singleElement()
                .satisfies(s -> assertThat(s.getName()).isEqualTo("regcred"));
        assertThat(rendered.agent().getResources().getLimits())
                .containsEntry("memory", new Quantity("1Gi"))
                .containsEntry("cpu", new Quantity("1"));
        assertThat(rendered.agent().getResources().getRequests()).containsEntry("cpu", new Quantity("200m"));
        assertThat(rendered.pod().getNodeSelector()).containsEntry("pool", "batch");
        assertThat(rendered.pod().getTolerations())
                .extracting(Toleration::getKey)
                .containsExactly("dedicated");
        assertThat(rendered.pod().getPriorityClassName()).isEqualTo("drover-critical");
        assertThat(rendered.agent().getArgs()).endsWith("--kubeconfig", "/etc/kubernetes/drover.conf");
        assertThat(rendered.configMap("node-agent").orElseThrow().getData().get("agent.yaml"))
                .contains("logLevel: debug", "maxKillTimeout: 1m", "parallelDestroys: 2");
    }

    @Test
    void defaultImageIsTheChartsAppVersion() {
        assertThat(DroverChart.render(ValueSet.DEFAULTS).agent().getImage())
                .isEqualTo("ghcr.io/drover-dev/drover-agent:0.1.0");
    }

    private static Volume volume(Rendered rendered, String name) {
        return rendered.pod().getVolumes().stream()
                .filter(v -> v.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + name + " in "
                        + rendered.pod().getVolumes().stream()
                                .map(Volume::getName)
                                .collect(Collectors.joining(", "))));
    }

    private static VolumeMount mount(Rendered rendered, String name) {
        return rendered.agent().getVolumeMounts().stream()
                .filter(m -> m.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no mount of " + name));
    }
}
