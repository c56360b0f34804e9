package dev.drover.api.crd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckRestart;
import dev.drover.api.v1alpha1.EphemeralDisk;
import dev.drover.api.v1alpha1.Task;
import dev.drover.common.Durations;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CrdTest {

    static final String RESOURCE = "META-INF/fabric8/allocations.drover.dev-v1.yml";
    static final Path CHECKED_IN = Path.of("..", "charts", "drover", "crds", "allocations.drover.dev-v1.yml");

    static String generated() throws IOException {
        try (InputStream in = CrdTest.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            assertThat(in).as("generated CRD on the classpath").isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static CustomResourceDefinitionVersion version() throws IOException {
        return Serialization.unmarshal(generated(), CustomResourceDefinition.class)
                .getSpec()
                .getVersions()
                .getFirst();
    }

    @Test
    void checkedInCrdMatchesTheModel() throws IOException {
        assertThat(Files.readString(CHECKED_IN))
                .as("charts/drover/crds/allocations.drover.dev-v1.yml is stale; refresh it with:"
                        + " cp crds/target/classes/" + RESOURCE + " charts/drover/crds/")
                .isEqualTo(generated());
    }

    @Test
    void namesShortNameAndCategory() throws IOException {
        CustomResourceDefinition crd = Serialization.unmarshal(generated(), CustomResourceDefinition.class);
        assertThat(crd.getMetadata().getName()).isEqualTo("allocations.drover.dev");
        assertThat(crd.getSpec().getScope()).isEqualTo("Namespaced");
        assertThat(crd.getSpec().getNames().getShortNames()).containsExactly("alloc");
        assertThat(crd.getSpec().getNames().getCategories()).containsExactly("drover");
        assertThat(crd.getSpec().getNames().getSingular()).isEqualTo("allocation");
    }

    @Test
    void printerColumnsInTheOrderUsersExpect() throws IOException {
        assertThat(version().getAdditionalPrinterColumns())
                .extracting(CustomResourceColumnDefinition::getName, CustomResourceColumnDefinition::getJsonPath)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("Node", ".spec.nodeName"),
                        org.assertj.core.groups.Tuple.tuple("Status", ".status.clientStatus"),
                        org.assertj.core.groups.Tuple.tuple("Ready", ".status.ready"),
                        org.assertj.core.groups.Tuple.tuple("Restarts", ".status.restarts"),
                        org.assertj.core.groups.Tuple.tuple("Age", ".metadata.creationTimestamp"),
                        org.assertj.core.groups.Tuple.tuple("Type", ".spec.type"),
                        org.assertj.core.groups.Tuple.tuple("Desired", ".spec.desiredStatus"),
                        org.assertj.core.groups.Tuple.tuple("IP", ".status.network.ip"),
                        org.assertj.core.groups.Tuple.tuple("Devices", ".status.devices"),
                        org.assertj.core.groups.Tuple.tuple("Description", ".status.clientDescription"));
        assertThat(version().getAdditionalPrinterColumns())
                .as("kubectl get shows the first five; -o wide adds the rest")
                .extracting(CustomResourceColumnDefinition::getPriority)
                .containsExactly(0, 0, 0, 0, 0, 1, 1, 1, 1, 1);
    }

    @Test
    void everyPropertyHasADescriptionForKubectlExplain() throws IOException {
        JSONSchemaProps root = version().getSchema().getOpenAPIV3Schema();
        assertThat(root.getDescription()).isNotBlank();
        List<String> undescribed = new ArrayList<>();
        undescribed(root, "", undescribed);
        assertThat(undescribed)
                .as("give these a @JsonPropertyDescription in the model (kubectl explain shows it)")
                .isEmpty();
        assertThat(root.getProperties().get("spec").getDescription()).startsWith("What the user asked for");
        assertThat(root.getProperties().get("spec").getProperties().get("tasks").getDescription())
                .contains("keyed by name");
    }

    private static void undescribed(JSONSchemaProps schema, String path, List<String> out) {
        if (schema.getProperties() != null) {
            schema.getProperties().forEach((name, property) -> {
                String at = path + "." + name;
                if (property.getDescription() == null
                        || property.getDescription().isBlank()) {
                    out.add(at);
                }
                undescribed(property, at, out);
            });
        }
        if (schema.getItems() != null && schema.getItems().getSchema() != null) {
            undescribed(schema.getItems().getSchema(), path + "[]", out);
        }
        if (schema.getAdditionalProperties() != null
                && schema.getAdditionalProperties().getSchema() != null) {
            undescribed(schema.getAdditionalProperties().getSchema(), path + "{}", out);
        }
    }

    @Test
    void namedListsAreMapsKeyedByName() throws IOException {
        JSONSchemaProps spec =
                version().getSchema().getOpenAPIV3Schema().getProperties().get("spec");
        JSONSchemaProps tasks = spec.getProperties().get("tasks");
        JSONSchemaProps task = tasks.getItems().getSchema();
        for (JSONSchemaProps list : List.of(
                tasks, task.getProperties().get("env"), task.getProperties().get("checks"))) {
            assertThat(list.getXKubernetesListType()).isEqualTo("map");
            assertThat(list.getXKubernetesListMapKeys()).containsExactly("name");
            assertThat(list.getItems().getSchema().getRequired())
                    .as("a list map's key must be required")
                    .contains("name");
        }
        JSONSchemaProps pullSecrets = spec.getProperties().get("imagePullSecrets");
        assertThat(pullSecrets.getXKubernetesListType()).isEqualTo("map");
        assertThat(pullSecrets.getMaxItems()).as("imagePullSecrets").isEqualTo(16L);
        JSONSchemaProps pullSecret = pullSecrets.getItems().getSchema();
        assertThat(pullSecret.getRequired()).containsExactly("name");
        assertThat(pullSecret.getProperties().get("name").getPattern())
                .isEqualTo(dev.drover.api.v1alpha1.Names.DNS1123_SUBDOMAIN);
        assertThat(task.getProperties().get("files").getXKubernetesListType())
                .as("files have no key: atomic")
                .isNull();
    }

    @Test
    void statusSubresourceAndSelectableNodeName() throws IOException {
        CustomResourceDefinitionVersion v = version();
        assertThat(v.getSubresources().getStatus()).isNotNull();
        assertThat(v.getSelectableFields()).extracting(f -> f.getJsonPath()).containsExactly(".spec.nodeName");
    }

    @Test
    void celRulesGuardWhatTheSchemaCannot() throws IOException {
        JSONSchemaProps spec =
                version().getSchema().getOpenAPIV3Schema().getProperties().get("spec");
        assertThat(spec.getProperties().get("nodeName").getXKubernetesValidations())
                .extracting(ValidationRule::getRule)
                .containsExactly("self == oldSelf");
        JSONSchemaProps tasks = spec.getProperties().get("tasks");
        assertThat(tasks.getMinItems()).isEqualTo(1L);
        assertThat(tasks.getMaxItems()).isEqualTo(64L);
        assertThat(tasks.getXKubernetesValidations())
                .extracting(ValidationRule::getMessage)
                .as("unique names need no rule: tasks is a list map keyed by name")
                .containsExactly("at most one task may be the leader");
        assertThat(spec.getProperties().get("restartPolicy").getXKubernetesValidations())
                .extracting(ValidationRule::getMessage)
                .containsExactlyInAnyOrder("attempts 0 is only allowed with mode Fail", "interval must be at least 5s");
        JSONSchemaProps task = tasks.getItems().getSchema();
        assertThat(task.getProperties().get("killTimeout").getPattern()).isNotBlank();
        assertThat(task.getProperties().get("name").getPattern()).isEqualTo("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
        assertThat(task.getProperties().get("config").getXKubernetesPreserveUnknownFields())
                .isTrue();
        assertThat(task.getProperties().get("config").getAdditionalProperties())
                .as("config values may be of any type")
                .isNull();
        JSONSchemaProps device = task.getProperties()
                .get("resources")
                .getProperties()
                .get("devices")
                .getItems()
                .getSchema();
        assertThat(device.getXKubernetesValidations())
                .extracting(ValidationRule::getRule)
                .containsExactly("!has(self.count) || self.count >= 1");
    }

    @Test
    void enumsAndDefaults() throws IOException {
        JSONSchemaProps spec =
                version().getSchema().getOpenAPIV3Schema().getProperties().get("spec");
        assertThat(spec.getProperties().get("desiredStatus").getEnum())
                .extracting(n -> n.asText())
                .containsExactlyInAnyOrder("Run", "Stop");
        assertThat(spec.getProperties().get("desiredStatus").getDefault().asText())
                .isEqualTo("Run");
        assertThat(spec.getProperties().get("type").getDefault().asText()).isEqualTo("Service");
        assertThat(spec.getRequired()).containsExactlyInAnyOrder("nodeName", "tasks");
    }

    @Test
    void apiServerDefaultsAgreeWithTheModelsDefaults() throws IOException {
        JSONSchemaProps spec =
                version().getSchema().getOpenAPIV3Schema().getProperties().get("spec");
        JSONSchemaProps task = spec.getProperties().get("tasks").getItems().getSchema();
        Task bare = new Task();
        assertThat(Durations.parse(
                        task.getProperties().get("killTimeout").getDefault().asText()))
                .isEqualTo(bare.effectiveKillTimeout());
        assertThat(task.getProperties().get("killSignal").getDefault().asText()).isEqualTo(bare.effectiveKillSignal());
        assertThat(Durations.parse(
                        task.getProperties().get("shutdownDelay").getDefault().asText()))
                .isEqualTo(bare.effectiveShutdownDelay());
        assertThat(task.getProperties().get("leader").getDefault().asBoolean()).isEqualTo(bare.isLeaderTask());
        assertThat(task.getProperties().get("leader").getDefault().isBoolean()).isTrue();

        JSONSchemaProps check = task.getProperties().get("checks").getItems().getSchema();
        Check bareCheck = new Check();
        assertThat(Durations.parse(
                        check.getProperties().get("interval").getDefault().asText()))
                .isEqualTo(bareCheck.effectiveInterval());
        assertThat(Durations.parse(
                        check.getProperties().get("timeout").getDefault().asText()))
                .isEqualTo(bareCheck.effectiveTimeout());
        assertThat(Durations.parse(
                        check.getProperties().get("initialDelay").getDefault().asText()))
                .isEqualTo(bareCheck.effectiveInitialDelay());
        assertThat(check.getProperties().get("successThreshold").getDefault().asInt())
                .isEqualTo(bareCheck.effectiveSuccessThreshold());
        assertThat(check.getProperties().get("failureThreshold").getDefault().asInt())
                .isEqualTo(bareCheck.effectiveFailureThreshold());
        assertThat(check.getProperties().get("type").getEnum())
                .extracting(n -> n.asText())
                .containsExactlyInAnyOrder("http", "tcp", "exec");
        JSONSchemaProps restart = task.getProperties().get("checkRestart");
        CheckRestart.Resolved restartDefaults = CheckRestart.resolve(null);
        assertThat(restart.getProperties().get("limit").getDefault().asInt()).isEqualTo(restartDefaults.limit());
        assertThat(Durations.parse(
                        restart.getProperties().get("grace").getDefault().asText()))
                .isEqualTo(restartDefaults.grace());
        assertThat(restart.getProperties().get("ignoreWarnings").getDefault().asBoolean())
                .isEqualTo(restartDefaults.ignoreWarnings());

        JSONSchemaProps disk = spec.getProperties().get("ephemeralDisk");
        EphemeralDisk.Resolved defaults = EphemeralDisk.resolve(null);
        assertThat(disk.getProperties().get("sizeMB").getDefault().isInt()).isTrue();
        assertThat(disk.getProperties().get("sizeMB").getDefault().asInt()).isEqualTo(defaults.sizeMB());
        assertThat(disk.getProperties().get("sticky").getDefault().asBoolean()).isEqualTo(defaults.sticky());
        assertThat(disk.getProperties().get("migrate").getDefault().asBoolean()).isEqualTo(defaults.migrate());
        // The restart policy's defaults depend on the type, which a schema default cannot express.
        assertThat(spec.getProperties().get("restartPolicy").getProperties().values())
                .allSatisfy(p -> assertThat(p.getDefault()).isNull());
    }
}
