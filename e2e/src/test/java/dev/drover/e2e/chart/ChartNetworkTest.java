package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.drover.admission.NodePorts;
import dev.drover.agent.AgentConfig;
import dev.drover.agent.NetworkSettings;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What the chart gives the agent for allocations' networks (docs/networking.md): the settings in its config file,
 * the node's address, and with exec or oci the node's network, the CNI plugins and a data dir whose mounts reach the
 * node.
 */
class ChartNetworkTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private static final Map<String, Object> EXEC = Map.of("agent.exec.enabled", true);
    private static final Map<String, Object> OCI =
            Map.of("agent.oci.enabled", true, "agent.oci.runtime", "/usr/bin/runc");

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void theAgentLearnsTheNodesAddressFromTheDownwardApi(ValueSet values) {
        Rendered rendered = DroverChart.render(values);
        assertThat(rendered.envVar("DROVER_NODE_ADDRESS"))
                .hasValueSatisfying(
                        e -> assertThat(e.getValueFrom().getFieldRef().getFieldPath())
                                .isEqualTo("status.hostIP"));
    }

    @Test
    void theAgentReadsTheNetworkSettingsTheChartRenders() throws Exception {
        Rendered defaults = DroverChart.render(ValueSet.DEFAULTS);
        assertThat(load(defaults))
                .as("the defaults are the agent's")
                .isEqualTo(new NetworkSettings(
                        Path.of("/opt/cni/bin"),
                        new NodePorts.Range(20000, 32000),
                        "drover0",
                        "172.26.64.0/20",
                        Optional.empty()));

        Rendered custom = DroverChart.render(
                ValueSet.DEFAULTS,
                Map.of(
                        "agent.network.cniBinDir", "/usr/libexec/cni",
                        "agent.network.dynamicPorts", "20000-29999",
                        "agent.network.bridge.name", "apps0",
                        "agent.network.bridge.subnet", "10.250.0.0/22"));
        assertThat(load(custom))
                .isEqualTo(new NetworkSettings(
                        Path.of("/usr/libexec/cni"),
                        new NodePorts.Range(20000, 29999),
                        "apps0",
                        "10.250.0.0/22",
                        Optional.empty()));
        assertThat(YAML.readTree(agentYaml(custom)).path("logLevel").asText())
                .as("agent.config is kept beside them")
                .isEqualTo("info");
    }

    @Test
    void withOnlyTheMockDriverThePodStaysInItsOwnNetworkWithNoNodePathButTheDataDir() {
        Rendered rendered = DroverChart.render(ValueSet.DEFAULTS);
        assertThat(rendered.pod().getHostNetwork()).isNull();
        assertThat(rendered.pod().getDnsPolicy()).isNull();
        assertThat(mount(rendered, "data").getMountPropagation()).isNull();
        assertThat(rendered.pod().getVolumes())
                .filteredOn(v -> v.getHostPath() != null)
                .extracting(Volume::getName)
                .containsExactly("data");
    }

    @Test
    void execAndOciRunInTheNodesNetworkWithItsPluginsAndADataDirWhoseMountsReachTheNode() {
        for (Map<String, Object> driver : List.of(EXEC, OCI)) {
            Rendered rendered = DroverChart.render(ValueSet.DEFAULTS, driver);
            assertThat(rendered.pod().getHostNetwork())
                    .as("%s: the node's network", driver)
                    .isTrue();
            assertThat(rendered.pod().getDnsPolicy())
                    .as("cluster names still resolve from the node's network")
                    .isEqualTo("ClusterFirstWithHostNet");
            assertThat(mount(rendered, "data").getMountPropagation())
                    .as("%s: network namespaces mounted under the data dir outlive the container", driver)
                    .isEqualTo("Bidirectional");
            assertThat(rendered.agent().getSecurityContext().getPrivileged())
                    .as("Bidirectional propagation needs a privileged container")
                    .isTrue();
            Volume cni = volume(rendered, "cni-bin");
            assertThat(cni.getHostPath().getPath()).isEqualTo("/opt/cni/bin");
            assertThat(cni.getHostPath().getType()).isEqualTo("DirectoryOrCreate");
            assertThat(mount(rendered, "cni-bin").getMountPath()).isEqualTo("/opt/cni/bin");
            assertThat(mount(rendered, "cni-bin").getReadOnly()).isTrue();
            assertThat(volume(rendered, "xtables-lock").getHostPath().getPath())
                    .as("iptables takes the node's lock, as kube-proxy does")
                    .isEqualTo("/run/xtables.lock");
            assertThat(volume(rendered, "xtables-lock").getHostPath().getType()).isEqualTo("FileOrCreate");
            assertThat(mount(rendered, "xtables-lock").getMountPath()).isEqualTo("/run/xtables.lock");
        }
    }

    @Test
    void aCustomPluginDirIsMountedWhereTheAgentLooksAndTheImagesOwnIsNotCovered() throws Exception {
        Map<String, Object> sets = new java.util.HashMap<>(EXEC);
        sets.put("agent.network.cniBinDir", "/home/kubernetes/bin");
        Rendered node = DroverChart.render(ValueSet.DEFAULTS, sets);
        assertThat(volume(node, "cni-bin").getHostPath().getPath()).isEqualTo("/home/kubernetes/bin");
        assertThat(mount(node, "cni-bin").getMountPath())
                .isEqualTo(load(node).cniBinDir().toString());

        sets.put("agent.network.cniBinDir", "/usr/lib/cni");
        Rendered image = DroverChart.render(ValueSet.DEFAULTS, sets);
        assertThat(image.agent().getVolumeMounts())
                .as("the plugins in the agent's image are used as they are")
                .extracting(VolumeMount::getName)
                .doesNotContain("cni-bin");
        assertThat(load(image).cniBinDir()).isEqualTo(Path.of("/usr/lib/cni"));
    }

    @Test
    void rawExecOnTheHostRunsInTheNodesNetworkButMakesNoNamespaces() {
        Rendered rendered = DroverChart.render(ValueSet.RAW_EXEC);
        assertThat(rendered.pod().getHostNetwork())
                .as("its tasks listen in the node's network, where the agent checks them")
                .isTrue();
        assertThat(mount(rendered, "data").getMountPropagation()).isNull();
        assertThat(rendered.agent().getVolumeMounts())
                .extracting(VolumeMount::getName)
                .doesNotContain("cni-bin");

        Rendered inContainer = DroverChart.render(ValueSet.RAW_EXEC, Map.of("agent.rawExec.hostProcesses", false));
        assertThat(inContainer.pod().getHostNetwork())
                .as("tasks inside the agent's container stay in the Pod's network")
                .isNull();
    }

    @Test
    void badNetworkValuesFailTheRenderNamingThem() {
        Map<String, String> bad = Map.of(
                "agent.network.cniBinDir", "opt/cni/bin",
                "agent.network.dynamicPorts", "20000:32000",
                "agent.network.bridge.name", "a-bridge-name-too-long",
                "agent.network.bridge.subnet", "172.26.64.0");
        bad.forEach((key, value) -> assertThatThrownBy(
                        () -> DroverChart.template(ValueSet.DEFAULTS, Map.of(key, value)))
                .hasMessageContaining("values don't meet the specifications of the schema")
                .hasMessageContaining("/" + key.replace('.', '/')));
    }

    private static String agentYaml(Rendered rendered) {
        return rendered.configMap("drover").orElseThrow().getData().get("agent.yaml");
    }

    /** The network settings the agent takes from the config file the chart rendered. */
    private static NetworkSettings load(Rendered rendered) throws Exception {
        Path file = Files.createTempFile("agent", ".yaml");
        try {
            Files.writeString(file, agentYaml(rendered));
            return AgentConfig.load(List.of("--config", file.toString(), "--node", "n1"), Map.of())
                    .networks();
        } finally {
            Files.delete(file);
        }
    }

    private static Volume volume(Rendered rendered, String name) {
        return rendered.pod().getVolumes().stream()
                .filter(v -> v.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + name));
    }

    private static VolumeMount mount(Rendered rendered, String name) {
        return rendered.agent().getVolumeMounts().stream()
                .filter(m -> m.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no mount of " + name));
    }
}
