package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.local.LocalApiServer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real kubectl resizes a Pod in place on a local cluster acting as 1.35, and sees the kubelet stand-in's answer
 * as on a real node: accepted, or pending with the kubelet's reason.
 */
class KubectlResizeTest {

    private static final String POD = """
            apiVersion: v1
            kind: Pod
            metadata: {name: web, namespace: default}
            spec:
              nodeName: node-a
              containers:
              - name: app
                image: registry.k8s.io/pause:3.10
                resources: {requests: {cpu: 500m, memory: 256Mi}}
            """;

    @TempDir
    Path dir;

    static String resize(String cpu) {
        return "[{\"op\":\"test\",\"path\":\"/spec/containers/0/name\",\"value\":\"app\"},"
                + "{\"op\":\"replace\",\"path\":\"/spec/containers/0/resources/requests/cpu\",\"value\":\"" + cpu
                + "\"}]";
    }

    @Test
    void kubectlPatchWithTheResizeSubresourceIsAcceptedOrLeftPendingAsTheNodeAllows() throws Exception {
        try (LocalApiServer server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("node-a"))
                .withKubeVersion("1.35")
                .withNodeAllocatable("cpu=2,memory=4Gi")
                .withKubeconfig(dir.resolve("kubeconfig")))) {
            Kubectl kubectl = new Kubectl(server.kubeconfig());
            kubectl.runWithInput(POD, "apply", "-f", "-").assertOk();
            kubectl.run("wait", "--for=jsonpath={.status.phase}=Running", "pod/web", "--timeout=10s")
                    .assertOk();

            kubectl.run("patch", "pod", "web", "--subresource", "resize", "--type", "json", "-p", resize("1"))
                    .assertOk();
            kubectl.run(
                            "wait",
                            "--for=jsonpath={.status.containerStatuses[0].allocatedResources.cpu}=1",
                            "pod/web",
                            "--timeout=10s")
                    .assertOk();

            // kubectl's default, a strategic merge patch: the container is merged by name
            kubectl.run(
                            "patch",
                            "pod",
                            "web",
                            "--subresource",
                            "resize",
                            "-p",
                            "{\"spec\":{\"containers\":[{\"name\":\"app\",\"resources\":{\"requests\":"
                                    + "{\"memory\":\"512Mi\"}}}]}}")
                    .assertOk();
            kubectl.run(
                            "wait",
                            "--for=jsonpath={.status.containerStatuses[0].allocatedResources.memory}=512Mi",
                            "pod/web",
                            "--timeout=10s")
                    .assertOk();

            kubectl.run("patch", "pod", "web", "--subresource", "resize", "--type", "json", "-p", resize("3"))
                    .assertOk();
            kubectl.run("wait", "--for=condition=PodResizePending", "pod/web", "--timeout=10s")
                    .assertOk();
            assertThat(kubectl.run(
                                    "get",
                                    "pod",
                                    "web",
                                    "-o",
                                    "jsonpath={.status.conditions[?(@.type==\"PodResizePending\")].reason}: "
                                            + "{.status.conditions[?(@.type==\"PodResizePending\")].message}")
                            .assertOk()
                            .out())
                    .isEqualTo("Infeasible: Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000");

            Kubectl.Result image = kubectl.run(
                    "patch",
                    "pod",
                    "web",
                    "--subresource",
                    "resize",
                    "--type",
                    "json",
                    "-p",
                    "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
                            + "\"value\":{\"ephemeral-storage\":\"1Gi\"}}]");
            assertThat(image.exitCode()).isNotZero();
            assertThat(image.err())
                    .contains("The Pod \"web\" is invalid: spec: Forbidden: only cpu and memory resources are mutable");
        }
    }
}
