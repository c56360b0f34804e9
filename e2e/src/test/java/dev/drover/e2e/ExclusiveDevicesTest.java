package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.local.AgentIdentity;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The chart's exclusive-devices policies ({@code drover-devices-pods}, {@code -workloads}, {@code -cronjobs}), applied
 * as a real install applies them ({@link AgentIdentity}), attacked through kubectl by the administrator: a Pod, or a
 * workload's pod template, that asks the kubelet for one of Drover's devices ({@code drover.dev/...}) is refused with
 * the container and the resource named; other extended resources pass.
 */
class ExclusiveDevicesTest {

    @RegisterExtension
    static final LocalCluster CLUSTER = new LocalCluster("a");

    static final String WHY = ": Drover's devices are handed out by its agent to allocations, not by the kubelet to"
            + " Pods: ask for them in an Allocation's task resources.devices";

    static Kubectl kubectl;

    @BeforeAll
    static void install() {
        AgentIdentity.install(CLUSTER.server(), AgentKubeconfig.CHART);
        kubectl = CLUSTER.kubectl();
    }

    static Kubectl.Result apply(String yaml) {
        return kubectl.runWithInput(yaml, "apply", "-f", "-");
    }

    static String pod(String name, String containers) {
        return """
                apiVersion: v1
                kind: Pod
                metadata: {name: %s, namespace: default}
                spec:
                %s""".formatted(name, containers.indent(2));
    }

    @Test
    void aPodThatLimitsADroverDeviceIsRefusedNamingTheContainerAndTheDevice() {
        var refused = apply(pod("trainer", """
                containers:
                - name: train
                  image: busybox
                  resources:
                    limits: {drover.dev/nvidia-gpu: "1", cpu: "1"}
                """));
        assertThat(refused.exitCode()).isNotZero();
        assertThat(refused.err())
                .contains("ValidatingAdmissionPolicy 'drover-devices-pods' with binding 'drover-devices-pods'"
                        + " denied request: container \"train\" limits drover.dev/nvidia-gpu" + WHY);
        assertThat(kubectl.run("get", "pod", "trainer").exitCode()).isNotZero();
    }

    @Test
    void aPodWhoseInitContainerRequestsADroverDeviceIsRefused() {
        var refused = apply(pod("warmup", """
                initContainers:
                - name: probe
                  image: busybox
                  resources:
                    requests: {drover.dev/fake-gpu: "1"}
                    limits: {drover.dev/fake-gpu: "1"}
                containers:
                - name: main
                  image: busybox
                """));
        assertThat(refused.exitCode()).isNotZero();
        assertThat(refused.err())
                .contains("denied request: init container \"probe\" requests drover.dev/fake-gpu" + WHY);
    }

    @Test
    void everyContainerThatAsksIsNamedInOneMessage() {
        var refused = apply(pod("both", """
                containers:
                - name: one
                  image: busybox
                  resources:
                    requests: {drover.dev/nvidia-gpu: "1", drover.dev/fake-gpu: "2"}
                - name: plain
                  image: busybox
                - name: two
                  image: busybox
                  resources:
                    limits: {drover.dev/nvidia-gpu: "1"}
                """));
        assertThat(refused.err())
                .contains("denied request: container \"one\" requests drover.dev/fake-gpu, drover.dev/nvidia-gpu;"
                        + " container \"two\" limits drover.dev/nvidia-gpu" + WHY);
    }

    @Test
    void aPodThatAsksForTheKubeletsOwnDevicesIsAdmitted() {
        apply(pod("cuda", """
                containers:
                - name: cuda
                  image: busybox
                  resources:
                    limits: {nvidia.com/gpu: "1", example.com/drover.dev-lookalike: "1"}
                """)).assertOk();
        // an update that leaves its pod spec alone is not looked at; one that changes it still admits it
        kubectl.run("label", "pod", "cuda", "team=ml").assertOk();
        kubectl.run("annotate", "pod", "cuda", "note=fine").assertOk();
    }

    @Test
    void aDeploymentWithADroverDeviceInItsTemplateIsRefusedAtApply() {
        String deployment = """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: inference, namespace: default}
                spec:
                  replicas: 1
                  selector: {matchLabels: {app: inference}}
                  template:
                    metadata: {labels: {app: inference}}
                    spec:
                      containers:
                      - name: serve
                        image: busybox
                        resources:
                          limits: {LIMITS}
                """;
        var refused = apply(deployment.replace("{LIMITS}", "{drover.dev/nvidia-gpu: \"1\"}"));
        assertThat(refused.exitCode()).isNotZero();
        assertThat(refused.err())
                .contains("ValidatingAdmissionPolicy 'drover-devices-workloads' with binding"
                        + " 'drover-devices-workloads' denied request: container \"serve\" limits"
                        + " drover.dev/nvidia-gpu" + WHY);
        apply(deployment.replace("{LIMITS}", "{nvidia.com/gpu: \"1\"}")).assertOk();
        var changed = apply(deployment.replace("{LIMITS}", "{drover.dev/nvidia-gpu: \"1\"}"));
        assertThat(changed.exitCode())
                .as("an update that adds one is refused too")
                .isNotZero();
        assertThat(changed.err()).contains("container \"serve\" limits drover.dev/nvidia-gpu" + WHY);
    }

    @Test
    void aDaemonSetWithADroverDeviceInItsTemplateIsRefused() {
        var refused = apply("""
                apiVersion: apps/v1
                kind: DaemonSet
                metadata: {name: exporter, namespace: default}
                spec:
                  selector: {matchLabels: {app: exporter}}
                  template:
                    metadata: {labels: {app: exporter}}
                    spec:
                      containers:
                      - name: export
                        image: busybox
                        resources:
                          requests: {drover.dev/nvidia-gpu: "1"}
                """);
        assertThat(refused.err())
                .contains("'drover-devices-workloads' denied request: container \"export\" requests"
                        + " drover.dev/nvidia-gpu" + WHY);
    }
}
