package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** MutatingAdmissionPolicies on the local API server acting as Kubernetes 1.36: the chart's, and others. */
class MutatingPoliciesTest {

    static final String FINALIZER = "drover.dev/finalizer";

    static LocalApiServer server;
    static KubernetesClient client;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(
                LocalApiServer.Options.defaults().withNodes(List.of("n1")).withKubeVersion("1.36"));
        client = server.client();
        AgentIdentity.install(server, Path.of("..", "charts", "drover"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static Allocation alloc(String name, String... finalizers) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName(name)
                .withNamespace("default")
                .withFinalizers(finalizers)
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("n1");
        Task t = new Task();
        t.setName("main");
        t.setDriver("mock");
        t.setConfig(Map.of());
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return a;
    }

    @Test
    void theChartsPolicyPutsTheFinalizerOnEveryAllocationAtCreateOnce() {
        assertThat(client.resource(alloc("plain")).create().getMetadata().getFinalizers())
                .containsExactly(FINALIZER);
        assertThat(client.resource(alloc("other", "example.com/keep"))
                        .create()
                        .getMetadata()
                        .getFinalizers())
                .containsExactly("example.com/keep", FINALIZER);
        assertThat(client.resource(alloc("has-it", FINALIZER))
                        .create()
                        .getMetadata()
                        .getFinalizers())
                .as("its match condition leaves one that has it alone")
                .containsExactly(FINALIZER);
    }

    @Test
    void aPolicyThatDoesNotMatchLeavesObjectsAloneAndOneThatMatchesChangesThemBeforeValidation() {
        client.resource(server.client()
                        .getKubernetesSerialization()
                        .unmarshal("""
                        apiVersion: admissionregistration.k8s.io/v1
                        kind: MutatingAdmissionPolicy
                        metadata: {name: labelled-config}
                        spec:
                          matchConstraints:
                            resourceRules:
                            - apiGroups: [""]
                              apiVersions: [v1]
                              operations: [CREATE, UPDATE]
                              resources: [configmaps]
                          mutations:
                          - patchType: JSONPatch
                            jsonPatch:
                              expression: >-
                                [JSONPatch{op: "add", path: "/metadata/labels", value: {"team": "a"}}]
                        """, io.fabric8.kubernetes.api.model.HasMetadata.class))
                .create();
        client.resource(client.getKubernetesSerialization()
                        .unmarshal("""
                        apiVersion: admissionregistration.k8s.io/v1
                        kind: MutatingAdmissionPolicyBinding
                        metadata: {name: labelled-config}
                        spec: {policyName: labelled-config}
                        """, io.fabric8.kubernetes.api.model.HasMetadata.class))
                .create();

        Allocation untouched = client.resource(alloc("unlabelled", FINALIZER)).create();
        ConfigMap labelled = client.resource(new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("c")
                        .withNamespace("default")
                        .endMetadata()
                        .build())
                .create();

        assertThat(untouched.getMetadata().getLabels()).isNullOrEmpty();
        assertThat(labelled.getMetadata().getLabels()).containsEntry("team", "a");
    }

    @Test
    void aBadExpressionIsRefusedWhenThePolicyIsWritten() {
        assertThatThrownBy(() -> client.resource(client.getKubernetesSerialization()
                                .unmarshal(
                                        policy("bad", "JSONPatch", "[JSONPatch{op: 'add', path: "),
                                        io.fabric8.kubernetes.api.model.HasMetadata.class))
                        .create())
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("spec.mutations[0].jsonPatch.expression: Invalid value:")
                .hasMessageContaining("compilation failed");
    }

    @Test
    void anApplyConfigurationMutationIsRefusedInOneSentence() {
        assertThatThrownBy(() -> client.resource(client.getKubernetesSerialization()
                                .unmarshal(
                                        policy("apply", "ApplyConfiguration", "Object{}"),
                                        io.fabric8.kubernetes.api.model.HasMetadata.class))
                        .create())
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("the local cluster supports JSONPatch mutations only");
    }

    @Test
    void beforeKubernetes136ThereIsNoMutatingAdmissionPolicyAndNoFinalizerAtCreate() throws Exception {
        try (LocalApiServer old = LocalApiServer.start(
                LocalApiServer.Options.defaults().withNodes(List.of("n1")).withKubeVersion("1.35"))) {
            AgentIdentity.install(old, Path.of("..", "charts", "drover"));
            assertThat(old.client()
                            .resource(alloc("plain"))
                            .create()
                            .getMetadata()
                            .getFinalizers())
                    .isEmpty();
            assertThat(old.client().getApiGroup("admissionregistration.k8s.io").getVersions())
                    .extracting(v -> v.getVersion())
                    .containsExactly("v1");
            assertThat(old.client()
                            .getApiResources("admissionregistration.k8s.io/v1")
                            .getResources())
                    .extracting(r -> r.getName())
                    .doesNotContain("mutatingadmissionpolicies");
        }
        assertThat(client.getApiResources("admissionregistration.k8s.io/v1").getResources())
                .extracting(r -> r.getName())
                .contains("mutatingadmissionpolicies", "mutatingadmissionpolicybindings");
    }

    static String policy(String name, String patchType, String expression) {
        String body = patchType.equals("JSONPatch")
                ? "jsonPatch: {expression: " + Json.quote(expression) + "}"
                : "applyConfiguration: {expression: " + Json.quote(expression) + "}";
        return """
                apiVersion: admissionregistration.k8s.io/v1
                kind: MutatingAdmissionPolicy
                metadata: {name: %s}
                spec:
                  matchConstraints:
                    resourceRules:
                    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
                  mutations:
                  - patchType: %s
                    %s
                """.formatted(name, patchType, body);
    }
}
